"""Which provider serves a model name.

``anthropic/...`` goes through the anthropic SDK, ``openai/...`` (custom
endpoints are sent as ``openai/...`` too) over httpx (no SDK), ``demo``
(and ``demo/...``) is the offline demo, everything else goes through litellm.
Providers are stateless, so one instance of each serves every request; none
of these modules imports an SDK: see :mod:`core.providers.sdk`.
"""

from __future__ import annotations

from core.providers import openai_provider
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


def warm_up(model: str, api_base: str | None = None) -> None:
    """Start loading, in a background thread, what the first request for
    ``model`` (sent to ``api_base``, if given) needs: its SDK, whatever that
    SDK builds on first use, and the TLS trust store unless it is plain http."""
    preload = getattr(get_provider(model), "preload", None)
    if preload is not None:
        preload(api_base)
