"""Where a model's requests go: the provider-facing model name, base URL and key.

Its own module because every request needs it (a turn, a compaction, a branch
summary, the SDK warm-up) and none of them should import another for it.

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
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from core.sessions.context import saved_endpoint
from core.sessions.entries import Entry
from core.settings import Settings, read_state, write_state

_NAMED_IN_ENV = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL")
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


@dataclass(frozen=True)
class Target:
    """Where a model's requests go: the provider-facing model name, base URL and key."""

    model: str
    api_base: str | None
    api_key: str | None


def resolve_target(model: str, settings: Settings, api_base: str | None) -> Target:
    """Custom endpoints from the config are OpenAI-compatible: ``NAME/model`` is sent
    as ``openai/model`` to the endpoint's base URL with the key from its env var."""
    endpoint = settings.endpoint_for(model)
    if endpoint is not None:
        bare = model.split("/", 1)[1] if model.startswith(endpoint.name + "/") else model
        return Target(model=f"openai/{bare}", api_base=endpoint.base_url, api_key=endpoint.api_key)
    return Target(model=model, api_base=api_base, api_key=None)


def api_base_for(
    path: Sequence[Entry], model: str, explicit: str | None, settings: Settings
) -> str | None:
    """The base URL ``model``'s requests go to: ``--api-base`` given now, else
    the one saved with the model on the path (a continued session) if the user
    named its origin, else the settings' ``api_base``."""
    if explicit:
        return explicit
    saved = saved_endpoint(path, model)
    if saved and is_trusted(saved, settings):
        return saved
    return settings.api_base


def untrusted_endpoint(
    path: Sequence[Entry], model: str, explicit: str | None, settings: Settings
) -> str | None:
    """The endpoint saved with ``model`` on the path when the user never named
    its origin (so :func:`api_base_for` passed it over); None otherwise."""
    if explicit:
        return None
    saved = saved_endpoint(path, model)
    return saved if saved and not is_trusted(saved, settings) else None


def origin(url: str) -> str:
    """``scheme://host:port`` of ``url``, lower-cased: what trust is given to."""
    parts = urlsplit(url.strip())
    scheme = (parts.scheme or "http").lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}:{port or default}"


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
