"""Which provider serves a model name: the one of its wire
(:func:`core.providers.wires.wire_of`).

``anthropic/...`` goes through the anthropic SDK, ``openai/...`` (custom
endpoints are sent as ``openai/...`` too) over httpx (no SDK), ``demo``
(and ``demo/...``) is the offline demo, everything else goes through litellm.
Providers are stateless, so one instance of each serves every request; none
of these modules imports an SDK: see :mod:`core.providers.sdk`.
"""

from __future__ import annotations

from core.providers.anthropic_provider import AnthropicProvider
from core.providers.base import Provider
from core.providers.demo import DemoProvider
from core.providers.litellm_provider import LiteLLMProvider
from core.providers.openai_provider import OpenAIProvider
from core.providers.wires import Wire, wire_of

_DEMO = DemoProvider()
_PROVIDERS: dict[Wire, Provider] = {
    "demo": _DEMO,
    "anthropic": AnthropicProvider(),
    "openai": OpenAIProvider(),
    "litellm": LiteLLMProvider(),
}


def get_provider(model: str) -> Provider:
    return _PROVIDERS[wire_of(model)]


def warm_up(model: str, api_base: str | None = None) -> None:
    """Start loading, in a background thread, what the first request for
    ``model`` (sent to ``api_base``, if given) needs: its SDK, whatever that
    SDK builds on first use, and the TLS trust store unless it is plain http."""
    preload = getattr(get_provider(model), "preload", None)
    if preload is not None:
        preload(api_base)
