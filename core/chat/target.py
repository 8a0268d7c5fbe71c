"""Where a model's requests go: decided once, here, for every request.

A :class:`~core.providers.target.Target` (the provider-facing model name,
base URL, key variable and wire) is what a turn, a compaction, a branch summary, the window probe and
the SDK warm-up send by; the conversation owns the one for its model
(:attr:`core.chat.conversation.Conversation.target`) and every front end (the
app, print mode, the ``sessions`` commands) asks it rather than deciding.
:func:`target_for` is the one rule.

An endpoint saved in a session is data: a session file from someone else (an
import, later a sync) can name any host, and a request there would carry the
user's key. A saved endpoint is used only when the user named its origin here:
``--api-base`` (remembered once used), the config's ``api_base`` or an
``[[endpoints]]`` entry, ``OPENAI_BASE_URL``/``OPENAI_API_BASE``/
``ANTHROPIC_BASE_URL``, or a yes to the app's question.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

from core.compaction.summarizer import Summarizer
from core.providers.keys import PROVIDER_KEYS
from core.providers.target import Source, Target, origin
from core.providers.wires import Wire, wire_of
from core.sessions.context import saved_endpoint
from core.sessions.entries import Entry
from core.settings import Settings, read_state, write_state

_NAMED_IN_ENV = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL")
_BASE_IN_ENV: dict[Wire, tuple[str, ...]] = {
    "openai": ("OPENAI_API_BASE", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_BASE_URL",),
}
"""The variables a wire's SDK would take its base URL from, in the order it reads them."""
_REMEMBERED = "trusted_endpoints"
"""The state file's list of origins the user named (:func:`remember_endpoint`)."""


class UntrustedEndpoint(Exception):
    """The session's saved endpoint came from no choice of the user's here:
    nothing is sent there (no request, no key) until they name it."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.origin = origin(url)
        super().__init__(
            f"this session's endpoint {self.origin} came with the session, not from you: "
            f"nothing was sent there; to use it, run again with --api-base {url}"
        )


def target_for(
    model: str, settings: Settings, api_base: str | None = None, *, path: Sequence[Entry] = ()
) -> Target:
    """The one rule for where ``model``'s requests go. The base URL, first found:

    1. ``api_base``: named for this request (``--api-base``, or a target
       decided already, so deciding again gives the same target);
    2. the ``base_url`` of the ``[[endpoints]]`` entry serving the model;
    3. the one saved with the model on ``path`` (a continued session), if the
       user named its origin (:func:`is_trusted`);
    4. the config's ``api_base``;
    5. the environment's for the wire (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``);
    6. none: the provider's own server.

    A configured endpoint's model is sent as ``openai/model`` with the key from
    its ``api_key_env``, wherever its base URL came from."""
    endpoint = settings.endpoint_for(model)
    saved = saved_endpoint(path, model) if path and not api_base else None
    if endpoint is not None:
        bare = model.split("/", 1)[1] if model.startswith(endpoint.name + "/") else model
        return Target(
            model=f"openai/{bare}",
            api_base=api_base or endpoint.base_url,
            key_env=endpoint.api_key_env,
            wire="openai",
            source="flag" if api_base else "endpoint",
            key_for=endpoint.name,
            key_needed=endpoint.api_key_env is not None,
        )
    wire = wire_of(model)
    base, source = _base(api_base, saved, settings, wire)
    provider = model.split("/", 1)[0] if "/" in model else ""
    names = PROVIDER_KEYS.get(provider, ())
    return Target(
        model=model,
        api_base=base,
        key_env=next((n for n in names if os.environ.get(n)), names[0] if names else None),
        wire=wire,
        source=source,
        key_for=provider,
        key_needed=bool(names) and base is None,
    )


def summarizer_for(model: str, target: Target, settings: Settings) -> Summarizer:
    """Who summarises a conversation that sends ``model`` by ``target``: the
    config's ``compaction_model``, else the model itself, by that same target.
    The target's base URL carries over to a compaction model of the same
    provider only (another provider's model goes where it would go alone)."""
    chosen = settings.compaction.compaction_model or model
    if chosen == model:
        return Summarizer(model, target)
    same_provider = chosen.split("/", 1)[0] == model.split("/", 1)[0]
    return Summarizer(
        chosen, target_for(chosen, settings, target.api_base if same_provider else None)
    )


def _base(
    api_base: str | None, saved: str | None, settings: Settings, wire: Wire
) -> tuple[str | None, Source]:
    """Steps 1 and 3 to 6 of :func:`target_for`."""
    if api_base:
        return api_base, "flag"
    if saved and is_trusted(saved, settings):
        return saved, "session"
    if settings.api_base:
        return settings.api_base, "config"
    named = next((os.environ[n] for n in _BASE_IN_ENV.get(wire, ()) if os.environ.get(n)), None)
    if named:
        return named, "environment"
    return None, "provider"


def untrusted_endpoint(
    path: Sequence[Entry], model: str, explicit: str | None, settings: Settings
) -> str | None:
    """The endpoint saved with ``model`` on the path when the user never named
    its origin (so :func:`target_for` passed it over); None otherwise, and
    whenever something the user named decides (``--api-base``, an
    ``[[endpoints]]`` entry)."""
    if explicit or settings.endpoint_for(model) is not None:
        return None
    saved = saved_endpoint(path, model)
    return saved if saved and not is_trusted(saved, settings) else None


def is_trusted(url: str, settings: Settings) -> bool:
    """Whether the user named ``url``'s origin (see the module's docstring)."""
    named = [
        settings.api_base,
        *(endpoint.base_url for endpoint in settings.endpoints),
        *(os.environ.get(name) for name in _NAMED_IN_ENV),
    ]
    wanted = origin(url)
    if any(origin(base) == wanted for base in named if base):
        return True
    remembered = read_state().get(_REMEMBERED)
    return isinstance(remembered, list) and wanted in remembered


def remember_endpoint(url: str) -> None:
    """Trust ``url``'s origin from now on: the user named it."""
    wanted = origin(url)
    remembered = read_state().get(_REMEMBERED)
    known = [o for o in remembered if isinstance(o, str)] if isinstance(remembered, list) else []
    if wanted not in known:
        write_state(**{_REMEMBERED: [*known, wanted]})


_KEY_PREFIX = re.compile(
    r"^(?:sk|pk|rk|gsk|key|hf|r8|ghp|gho|ghs|ghu|github_pat|glpat|xox[abpr])[-_].{6,}|^AIza.{20,}"
)
"""Path segments that start like a known kind of key (``sk-...``, ``ghp_...``)."""
_KEY_NAMES = frozenset(
    {"key", "keys", "apikey", "api_key", "api-key", "token", "access_token", "secret", "auth"}
)
"""Path segments after which the next one is taken for a key (``/key/XYZ``)."""
_MIN_RANDOM = 20


def savable_base_url(url: str | None) -> str | None:
    """``url`` as it may be written down: no user name, password, query or
    fragment (where keys sometimes travel), and no path segment that looks
    like a key (see :func:`_secret_segment`).

    The segment is dropped rather than masked: what is saved names the server,
    and a continued session whose endpoint lost a key needs ``--api-base``
    again rather than a request to a made-up path."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    segments = parts.path.split("/")
    kept = [
        s for i, s in enumerate(segments) if not _secret_segment(s, segments[i - 1] if i else "")
    ]
    return urlunsplit((parts.scheme, netloc, "/".join(kept), "", "")) or None


def _secret_segment(segment: str, before: str) -> bool:
    """A key: a segment after ``key``/``token``/..., one that starts like a known
    key, or one holding a long random-looking run of letters and digits (20+
    with upper case, lower case and digits; 32+ with letters and digits, as
    hex keys are). Model and deployment names (``Meta-Llama-3-8B-Instruct``),
    UUIDs and version numbers stay."""
    if not segment:
        return False
    if before.lower() in _KEY_NAMES or _KEY_PREFIX.match(segment):
        return True
    return any(
        (len(run) >= _MIN_RANDOM and _mixed(run, upper=True)) or (len(run) >= 32 and _mixed(run))
        for run in re.split(r"[^A-Za-z0-9]+", segment)
    )


def _mixed(text: str, *, upper: bool = False) -> bool:
    """Digits and letters in ``text`` (with ``upper``: lower and upper case letters)."""
    if not any(c.isdigit() for c in text):
        return False
    if upper:
        return any(c.isupper() for c in text) and any(c.islower() for c in text)
    return any(c.isalpha() for c in text)
