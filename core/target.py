"""Where a model's requests go: the provider-facing model name, base URL and key.

Its own module because every request needs it (a turn, a compaction, a branch
summary, the SDK warm-up) and none of them should import another for it.
"""

from __future__ import annotations

from dataclasses import dataclass

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
