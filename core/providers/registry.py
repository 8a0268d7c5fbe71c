"""Which provider serves a model name.

``anthropic/...`` goes through the anthropic SDK, ``openai/...`` (custom
endpoints are sent as ``openai/...`` too) through the openai SDK, ``demo``
(and ``demo/...``) is the offline demo, everything else goes through litellm.
Providers are stateless, so one instance of each serves every request; none
of these modules imports an SDK: see :mod:`core.providers.sdk`.
"""

from __future__ import annotations

import threading

from core.providers import openai_provider, sdk
from core.providers.anthropic_provider import AnthropicProvider
from core.providers.base import Provider
from core.providers.demo import DemoProvider
from core.providers.litellm_provider import LiteLLMProvider
from core.providers.openai_provider import OpenAIProvider

_DEMO = DemoProvider()
_ANTHROPIC = AnthropicProvider()
_OPENAI = OpenAIProvider()
_LITELLM = LiteLLMProvider()


def is_demo(model: str) -> bool:
    return model == "demo" or model.startswith("demo/")


def get_provider(model: str) -> Provider:
    if is_demo(model):
        return _DEMO
    if model.startswith("anthropic/"):
        return _ANTHROPIC
    if openai_provider.serves(model):
        return _OPENAI
    return _LITELLM


def sdk_for(model: str) -> str | None:
    """The SDK the provider of ``model`` imports (None for the demo)."""
    provider = get_provider(model)
    return None if provider is _DEMO else provider.name


def warm_up(model: str) -> None:
    """Start loading, in background threads, what the first request for
    ``model`` needs: its SDK, the model table, the TLS context."""
    name = sdk_for(model)
    if name is None:
        return
    sdk.preload(name)
    threading.Thread(target=openai_provider.warm_up, name="warm-up", daemon=True).start()
