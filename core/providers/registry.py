"""Which provider serves a model name.

``anthropic/...`` goes through the anthropic SDK, ``demo`` (and ``demo/...``)
is the offline demo, everything else goes through litellm. Providers are
stateless, so one instance of each serves every request; none of these
modules imports an SDK before its first request.
"""

from __future__ import annotations

from core.providers.anthropic_provider import AnthropicProvider
from core.providers.base import Provider
from core.providers.demo import DemoProvider
from core.providers.litellm_provider import LiteLLMProvider

_DEMO = DemoProvider()
_ANTHROPIC = AnthropicProvider()
_LITELLM = LiteLLMProvider()


def is_demo(model: str) -> bool:
    return model == "demo" or model.startswith("demo/")


def get_provider(model: str) -> Provider:
    if is_demo(model):
        return _DEMO
    if model.startswith("anthropic/"):
        return _ANTHROPIC
    return _LITELLM
