"""Which wire a model's requests travel: the client that speaks to its server.

A pure rule on the model's name, so that deciding where a request goes
(:mod:`core.chat.target`) imports no provider; :mod:`core.providers.registry`
maps each wire to its provider.
"""

from __future__ import annotations

from typing import Literal

Wire = Literal["demo", "anthropic", "openai", "litellm"]


def is_demo(model: str) -> bool:
    return model == "demo" or model.startswith("demo/")


def wire_of(model: str) -> Wire:
    """``demo`` (offline), ``anthropic/...`` through the anthropic SDK,
    ``openai/...`` over httpx, everything else through litellm."""
    if is_demo(model):
        return "demo"
    if model.startswith("anthropic/"):
        return "anthropic"
    if model.startswith("openai/"):
        return "openai"
    return "litellm"
