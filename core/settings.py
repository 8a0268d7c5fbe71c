"""Typed settings, read from a TOML config file and the environment.

Precedence: command-line flags > environment (``TANGENTS_*``) > config file >
defaults. API keys are never read from or written to the config: endpoints
name the environment variable that holds their key.
"""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.config_check import Problem, bounded, build, choice
from core.sessions.entries import THINKING_LEVELS
from core.sessions.messages import AGENT_NAME

_MAX_TOKENS = 1_000_000_000
"""More tokens than any model takes: the ceiling of every token count set here."""

Pace = Callable[[], Awaitable[None]]
"""Awaited by a stream reader after each slice of the loop it held, before it
reads on (:mod:`core.providers.pacing`): a front end's say in when reading may
go on."""


async def no_pace() -> None:
    """Read on at once: no front end on the loop asks to go first."""


class ConfigError(Exception):
    """The config file cannot be used: one line per problem, each naming the
    file and the key."""

    def __init__(self, path: Path | None, problems: Iterable[object]) -> None:
        self.lines = [f"{path}: {problem}" for problem in problems]
        super().__init__("\n".join(self.lines))


@dataclass(frozen=True)
class Endpoint:
    """A custom OpenAI-compatible endpoint (Ollama, vLLM, LM Studio, OpenRouter...)."""

    name: str
    """Used as the model prefix: ``NAME/model``."""
    base_url: str
    api_key_env: str | None = None
    """The name of the environment variable holding the key (never the key)."""
    models: tuple[str, ...] = ()
    accepts: tuple[str, ...] | None = None
    """What its models take besides text: ``image``, ``audio``, ``pdf``.
    Unset: anything is tried, and the server's refusal reported."""
    parallel: int = bounded(1, 1, 1000)
    """Requests this process sends it at once (replies, summaries, compare
    columns, window questions): a server with one slot cuts off or queues a
    second request, so 1 unless it has more slots."""

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None


@dataclass(frozen=True)
class McpServer:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    trusted: bool = False
    env: dict[str, str] = field(default_factory=dict)
    """Variables set for the server (explicit values, always passed)."""
    env_passthrough: tuple[str, ...] = ()
    """Our variables this server may see although they look like keys."""


@dataclass(frozen=True)
class ToolSettings:
    env_passthrough: tuple[str, ...] = ()
    """Variables tools and MCP servers may see although they look like keys
    (see core.tools.env for what is hidden)."""
    mcp_ready_wait: float = bounded(2.0, 0, 3600)
    """Seconds after a server was started (at launch) that a reply may wait for
    it; tools of a server not ready by then are offered from a later reply."""
    mcp_call_timeout: float = bounded(120.0, 0.001, 86_400)
    """Seconds an MCP tool call may take before it ends with an error result."""
    max_calls_per_reply: int = bounded(50, 1, 100_000)
    """Tool calls run while answering one message; calls over it are not run
    and the reply stops, saying so."""


@dataclass(frozen=True)
class CompactionSettings:
    enabled: bool = True
    """Compact automatically when the context exceeds window - reserve_tokens."""
    reserve_tokens: int = bounded(16384, 0, _MAX_TOKENS)
    """Room kept free for the reply and the next message; at most a quarter of
    the model's window."""
    keep_recent_tokens: int = bounded(20000, 0, _MAX_TOKENS)
    """About this much recent conversation stays verbatim; at most a third of
    the model's window."""
    compaction_model: str | None = None
    """A cheaper model for summaries; the conversation's model when unset."""


MIN_MODELS, MAX_MODELS = 2, 4
"""How many models a comparison (a fan-out) asks at once."""


@dataclass(frozen=True)
class CompareSettings:
    models: tuple[str, ...] = ()
    """What ``/compare`` with no models (and ``alt+shift+v`` on a reply) sends to: 2-4 models."""


@dataclass(frozen=True)
class SyncSettings:
    folder: str | None = None
    """A folder a sync engine shares between machines (Syncthing, Dropbox,
    OneDrive, a git work tree): ``tangents sync`` exchanges sessions through it."""
    key_env: str | None = None
    """The name of an environment variable holding a passphrase: the folder's
    journals and images are then encrypted with a key derived from it (for a
    folder in someone else's cloud). The passphrase is never written anywhere."""
    auto: bool = False
    """The app syncs by itself with ``folder``: in the background at launch,
    after each saved reply and at quit."""
    quit_wait: float = bounded(5.0, 0.0, 600.0)
    """Seconds quitting the app waits for its last sync; then it quits and
    says so (the next sync sends the rest)."""


@dataclass(frozen=True)
class Agent:
    """A named speaker of a round table (``[[agents]]``): addressed as ``@name``."""

    name: str
    model: str
    """Any model, or an endpoint's ``NAME/model``."""
    system: str | None = None
    """Its own system prompt; the only one its requests carry."""
    thinking: str = choice("off", THINKING_LEVELS)
    color: str | None = None
    note: str | None = None
    note_depth: int = bounded(4, 0, 1000)


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    """Default model (litellm name). Unset: chosen from the API keys present, else ``demo``."""
    thinking: str = choice("off", THINKING_LEVELS)
    """Default thinking level: off, low, medium, high."""
    system: str | None = None
    """Default system prompt for new sessions."""
    api_base: str | None = None
    """Default base URL for an OpenAI-compatible endpoint."""
    opener: str | None = None
    """The command that opens an attached audio file or PDF from the transcript
    (the file's path is added after it; ``TANGENTS_OPENER`` overrides); unset:
    ``open`` on macOS, else ``xdg-open``."""
    image_budget: int = bounded(3, 0, 1000)
    """How many of the most recent images are sent as pixels."""
    retries: int = bounded(3, 0, 100)
    """Retries before the first token (rate limits, overload, server errors, lost connections)."""
    first_token_timeout: float = bounded(300.0, 0.001, 604_800)
    """Seconds a reply may wait for its first event (a local model reads a long
    prompt first); then it ends, saved, with the reason."""
    idle_timeout: float = bounded(60.0, 0.001, 604_800)
    """Seconds of silence allowed once a reply has begun."""
    max_time: float = bounded(1800.0, 0.001, 604_800)
    """Seconds a reply may take in all, however its server trickles (also ``-p --max-time``)."""
    max_tool_steps: int = bounded(25, 1, 10_000)
    """Tool-loop rounds before the model must answer."""
    extra_roots: tuple[str, ...] = ()
    """Directories the built-in tools may use besides the working directory
    (also ``--extra-root DIR``); relative ones are taken from the working directory."""
    branch_summary: str = choice("ask", ("ask", "always", "never"))
    """When leaving a branch: ask, always or never summarize it."""
    show_thinking: bool = True
    """Thinking blocks visible in the chat (toggled in the app, remembered)."""
    textual_patches: bool = True
    """The app's speed patches of Textual (``TANGENTS_TEXTUAL_PATCHES`` overrides):
    off, the app runs on Textual as shipped, only slower."""
    theme: str | None = None
    """The app's colour theme (chosen in the command palette, remembered); None: Textual's default."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Action id -> comma-separated keys, overriding the default bindings."""
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    compare: CompareSettings = field(default_factory=CompareSettings)
    sync: SyncSettings = field(default_factory=SyncSettings)
    context_windows: dict[str, int] = bounded({}, 1, _MAX_TOKENS)
    """Model -> input tokens it accepts, for models litellm's table does not know
    (local and custom endpoints) or to compact earlier than the real window."""
    endpoints: tuple[Endpoint, ...] = ()
    agents: tuple[Agent, ...] = ()
    """The round table's speakers, in the order ``@all`` asks them."""
    user_name: str | None = None
    """Put as ``Name: `` before the user's messages when an agent is asked; unset: no prefix."""
    refused_kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Model -> attachment kinds its server refused in this session
    (:mod:`core.chat.refused_kinds`): sent as notes. Not read from a file."""
    pace: Pace = field(default=no_pace, compare=False, repr=False)
    """Awaited between slices of every stream read (:mod:`core.providers.pacing`):
    the front end's say in sharing the event loop (the app's lets keys go
    first). Not read from a file."""
    mcp_servers: tuple[McpServer, ...] = ()
    tools: ToolSettings = field(default_factory=ToolSettings)
    config_path: Path | None = None

    def endpoint_for(self, model: str) -> Endpoint | None:
        prefix = model.split("/", 1)[0]
        for endpoint in self.endpoints:
            if endpoint.name == prefix or model in endpoint.models:
                return endpoint
        return None

    def default_model(self) -> str:
        if self.model:
            return self.model
        if os.environ.get("ANTHROPIC_API_KEY"):
            return "anthropic/claude-sonnet-4-5"
        if os.environ.get("OPENAI_API_KEY"):
            return "openai/gpt-4o-mini"
        if os.environ.get("GEMINI_API_KEY"):
            return "gemini/gemini-2.5-flash"
        return "demo"


_ENV_OVERRIDES = {
    "TANGENTS_MODEL": "model",
    "TANGENTS_THINKING": "thinking",
    "TANGENTS_API_BASE": "api_base",
    "TANGENTS_SYSTEM": "system",
    "TANGENTS_OPENER": "opener",
}


def load_settings(
    path: Path | None,
    *,
    required: bool = False,
    check: Callable[[Settings], Iterable[str]] | None = None,
) -> Settings:
    """Read settings from ``path`` (missing file: defaults unless ``required``).

    Every wrong value is reported at once, as one line of the :class:`ConfigError`;
    ``check`` adds what only its caller can judge (the app: whether the keymap's
    keys are keys), so the user still sees all problems together."""
    data, problems = _read(path, required)
    env = {attr: os.environ[name] for name, attr in _ENV_OVERRIDES.items() if os.environ.get(name)}
    found: list[Problem] = []
    settings = (
        build(
            Settings,
            {**data, **env},
            found,
            skip=frozenset({"config_path", "refused_kinds", "pace"}),
        )
        or Settings()
    )
    from_env = {attr: name for name, attr in _ENV_OVERRIDES.items() if attr in env}
    problems += [f"{from_env[p.key]}: {p.what}" if p.key in from_env else str(p) for p in found]
    problems += [str(p) for p in agent_problems(data.get("agents"))]
    settings = replace(settings, config_path=path)
    if check is not None:
        problems += check(settings)
    if problems:
        raise ConfigError(path, problems)
    return apply_state(settings)


def agent_problems(agents: Any) -> list[Problem]:
    """What the types cannot say about ``[[agents]]`` as the file has it (so
    these are found beside any other problem of the same agent): names
    ``@Name`` can address, each once (names match case-insensitively), and
    ``all`` kept for every agent."""
    problems: list[Problem] = []
    seen: set[str] = set()
    named = [
        (index, agent["name"])
        for index, agent in enumerate(agents if isinstance(agents, list) else ())
        if isinstance(agent, dict) and isinstance(agent.get("name"), str)
    ]
    for index, name in named:
        where = f"agents[{index}].name"
        if not AGENT_NAME.fullmatch(name):
            problems.append(
                Problem(
                    where,
                    "must start with a letter and hold only letters, digits, _ or - (at most 32)",
                )
            )
        elif name.casefold() == "all":
            problems.append(Problem(where, "'all' is taken: @all asks every agent"))
        elif name.casefold() in seen:
            problems.append(Problem(where, f"{name!r} is already the name of an agent"))
        seen.add(name.casefold())
    return problems


def _read(path: Path | None, required: bool) -> tuple[dict[str, Any], list[str]]:
    """The file's TOML (empty when there is none), or the reason it cannot be read."""
    if path is None:
        return {}, []
    try:
        return tomllib.loads(_read_bytes(path).decode("utf-8")), []
    except _NotAConfig as error:
        return {}, [str(error)]
    except FileNotFoundError:
        return {}, ["config file not found"] if required else []
    except UnicodeDecodeError as error:
        return {}, [f"not UTF-8 text (byte {error.start + 1} is {error.object[error.start]:#04x})"]
    except ValueError as error:  # TOMLDecodeError, or an integer too long for int()
        return {}, [f"not valid TOML: {error}"]
    except OSError as error:
        return {}, [f"cannot read config: {error.strerror}"]


_MAX_CONFIG_BYTES = 1024 * 1024
"""Far more than any config needs; a bigger file is a mistake, not settings."""


class _NotAConfig(Exception):
    """The path holds no small regular file."""


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, opened without waiting (a FIFO would wait for a writer
    forever) and refused unless it is a regular file of a sane size."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _NotAConfig("not a regular file")
        data = handle.read(_MAX_CONFIG_BYTES + 1)
    if len(data) > _MAX_CONFIG_BYTES:
        raise _NotAConfig(f"larger than {_MAX_CONFIG_BYTES // 1024} KiB: not a config file")
    return data


def seconds(value: Any, field_name: str) -> float:
    """A limit in seconds given on the command line: a finite number above zero."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9:
        raise ValueError(f"{field_name} must be a number of seconds above 0")
    return float(value)


def apply_state(settings: Settings) -> Settings:
    """Overlay what the app remembered (see :func:`core.paths.state_path`)."""
    state = read_state()
    if "show_thinking" in state:
        settings = replace(settings, show_thinking=bool(state["show_thinking"]))
    if isinstance(state.get("theme"), str):
        settings = replace(settings, theme=state["theme"])
    return settings


def read_state() -> dict[str, Any]:
    from core.paths import state_path

    try:
        return json.loads(state_path().read_text())
    except (OSError, ValueError):
        return {}


def write_state(**changes: Any) -> None:
    from core.paths import state_path

    path = state_path()
    state = read_state()
    state.update(changes)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    os.replace(tmp, path)
