"""Where a model's requests go, as every request is sent: a :class:`Target`.

Deciding it is the conversation's (:func:`core.chat.target.target_for`); the
providers, the window questions and the per-server slots only read one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from core.providers.wires import Wire

Source = Literal["flag", "endpoint", "session", "config", "environment", "provider"]
"""What chose a target's base URL (see :func:`core.chat.target.target_for`)."""
_CHOSEN: frozenset[Source] = frozenset({"flag", "session", "config"})
"""Sources of a base URL saved with the model: the ones a session goes back to."""


@dataclass(frozen=True)
class Target:
    """Where a model's requests go."""

    model: str
    """The provider-facing name (a configured endpoint's ``NAME/m`` goes as ``openai/m``)."""
    api_base: str | None
    """None: the provider's own server."""
    key_env: str | None = None
    """The environment variable whose key is sent (its name, never the key)."""
    wire: Wire = "litellm"
    source: Source = "provider"
    """What chose :attr:`api_base`."""
    key_for: str = ""
    """Who the key is for, as the user knows it: the endpoint's or the provider's name."""
    key_needed: bool = False
    """The server refuses a request without the key (a hosted provider, or an
    endpoint that names a variable); a local server at a base URL needs none."""

    @property
    def api_key(self) -> str | None:
        return (os.environ.get(self.key_env) or None) if self.key_env else None

    @property
    def chosen_base(self) -> str | None:
        """The base URL the user chose for the session (``--api-base``, the one
        saved with the model, the config's ``api_base``): saved with the model,
        so that ``-c`` goes back there; None when an ``[[endpoints]]`` entry, the
        environment or the provider decides."""
        return self.api_base if self.source in _CHOSEN else None

    def missing_key(self) -> str | None:
        """Why a request cannot go for lack of a key (one line), or None."""
        if self.key_needed and self.key_env and not self.api_key:
            return f"no API key for {self.key_for}: set {self.key_env}"
        return None


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
