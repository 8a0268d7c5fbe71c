"""Typed settings, read from a TOML config file and the environment.

Precedence: command-line flags > environment (``TANGENTS_*``) > config file >
defaults. API keys are never read from or written to the config: endpoints
name the environment variable that holds their key.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from core.entries import THINKING_LEVELS


class ConfigError(Exception):
    """The config file cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Endpoint:
    """A custom OpenAI-compatible endpoint (Ollama, vLLM, LM Studio, OpenRouter...)."""

    name: str
    """Used as the model prefix: ``NAME/model``."""
    base_url: str
    api_key_env: str | None = None
    """The name of the environment variable holding the key (never the key)."""
    models: tuple[str, ...] = ()

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
    mcp_ready_wait: float = 2.0
    """Seconds after a server was started (at launch) that a reply may wait for
    it; tools of a server not ready by then are offered from a later reply."""


@dataclass(frozen=True)
class CompactionSettings:
    enabled: bool = True
    """Compact automatically when the context exceeds window - reserve_tokens."""
    reserve_tokens: int = 16384
    """Room kept free for the reply and the next message; at most a quarter of
    the model's window."""
    keep_recent_tokens: int = 20000
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
class Settings:
    model: str | None = None
    """Default model (litellm name). Unset: chosen from the API keys present, else ``demo``."""
    thinking: str = "off"
    """Default thinking level: off, low, medium, high."""
    system: str | None = None
    """Default system prompt for new sessions."""
    api_base: str | None = None
    """Default base URL for an OpenAI-compatible endpoint."""
    image_budget: int = 3
    """How many of the most recent images are sent as pixels."""
    retries: int = 3
    """Retries before the first token (rate limits, overload, server errors, lost connections)."""
    max_tool_steps: int = 25
    """Tool-loop rounds before the model must answer."""
    extra_roots: tuple[str, ...] = ()
    """Directories the built-in tools may use besides the working directory
    (also ``--extra-root DIR``); relative ones are taken from the working directory."""
    branch_summary: str = "ask"
    """When leaving a branch: ask, always or never summarize it."""
    show_thinking: bool = True
    """Thinking blocks visible in the chat (toggled in the app, remembered)."""
    theme: str | None = None
    """The app's colour theme (chosen in the command palette, remembered); None: Textual's default."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Action id -> comma-separated keys, overriding the default bindings."""
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    compare: CompareSettings = field(default_factory=CompareSettings)
    context_windows: dict[str, int] = field(default_factory=dict)
    """Model -> input tokens it accepts, for models litellm's table does not know
    (local and custom endpoints) or to compact earlier than the real window."""
    endpoints: tuple[Endpoint, ...] = ()
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
}


def load_settings(path: Path | None, *, required: bool = False) -> Settings:
    """Read settings from ``path`` (missing file: defaults unless ``required``)."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except FileNotFoundError:
            if required:
                raise ConfigError(f"{path}: config file not found") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
        except OSError as error:
            raise ConfigError(f"{path}: cannot read config: {error.strerror}") from None
    try:
        settings = _from_mapping(data)
    except (TypeError, ValueError, KeyError) as error:
        raise ConfigError(f"{path}: {error}") from None
    env: dict[str, Any] = {
        attr: os.environ[name] for name, attr in _ENV_OVERRIDES.items() if os.environ.get(name)
    }
    settings = replace(settings, config_path=path, **env)
    if settings.thinking not in THINKING_LEVELS:
        raise ConfigError(f"{path}: thinking must be one of {', '.join(THINKING_LEVELS)}")
    return apply_state(settings)


def _from_mapping(data: dict[str, Any]) -> Settings:
    known = {f.name for f in fields(Settings)} - {"config_path"}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(sorted(unknown))}")
    values = dict(data)
    if "compaction" in values:
        values["compaction"] = CompactionSettings(**values["compaction"])
    if "compare" in values:
        models = values["compare"].get("models", [])
        if isinstance(models, str) or not all(isinstance(m, str) for m in models):
            raise ValueError("compare.models must be a list of model names")
        values["compare"] = CompareSettings(models=tuple(models))
    if "endpoints" in values:
        values["endpoints"] = tuple(
            Endpoint(
                name=e["name"],
                base_url=e["base_url"],
                api_key_env=e.get("api_key_env"),
                models=tuple(e.get("models", ())),
            )
            for e in values["endpoints"]
        )
    if "mcp_servers" in values:
        values["mcp_servers"] = tuple(
            McpServer(
                name=s["name"],
                command=s.get("command"),
                args=tuple(s.get("args", ())),
                url=s.get("url"),
                trusted=bool(s.get("trusted", False)),
                env={str(k): str(v) for k, v in s.get("env", {}).items()},
                env_passthrough=_names(s.get("env_passthrough", ()), "env_passthrough"),
            )
            for s in values["mcp_servers"]
        )
    if "tools" in values:
        tools = dict(values["tools"])
        if "env_passthrough" in tools:
            tools["env_passthrough"] = _names(tools["env_passthrough"], "tools.env_passthrough")
        if "mcp_ready_wait" in tools:
            tools["mcp_ready_wait"] = float(tools["mcp_ready_wait"])
        values["tools"] = ToolSettings(**tools)
    if "context_windows" in values:
        values["context_windows"] = {str(k): int(v) for k, v in values["context_windows"].items()}
    if "extra_roots" in values:
        roots = values["extra_roots"]
        if isinstance(roots, str) or not all(isinstance(r, str) for r in roots):
            raise ValueError("extra_roots must be a list of directory paths")
        values["extra_roots"] = tuple(roots)
    if "keymap" in values:
        values["keymap"] = {str(k): str(v) for k, v in values["keymap"].items()}
    if values.get("branch_summary", "ask") not in ("ask", "always", "never"):
        raise ValueError("branch_summary must be ask, always or never")
    return Settings(**values)


def _names(value: Any, field_name: str) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{field_name} must be a list of variable names")
    return tuple(value)


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
