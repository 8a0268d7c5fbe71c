"""Where a model's requests go: the provider-facing model name, base URL and key.

Its own module because every request needs it (a turn, a compaction, a branch
summary, the SDK warm-up) and none of them should import another for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from core.context import saved_endpoint
from core.entries import Entry
from core.settings import Settings


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
    the one saved with the model on the path (a continued session), else the
    settings' ``api_base``."""
    return explicit or saved_endpoint(path, model) or settings.api_base


def savable_base_url(url: str | None) -> str | None:
    """``url`` as it may be written down: no user name, password, query or
    fragment (where keys sometimes travel)."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")) or None
