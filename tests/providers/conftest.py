"""Fixtures for provider tests: a "wire" is one provider path (the anthropic SDK,
httpx for OpenAI-compatible servers, or litellm) pointed at the fake provider server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from fake_provider import FakeProvider

from core.providers.anthropic_provider import AnthropicProvider
from core.providers.assemble import MessageBuilder
from core.providers.base import ChatRequest, Provider, StreamEvent
from core.providers.litellm_provider import LiteLLMProvider
from core.providers.openai_provider import OpenAIProvider
from core.sessions.messages import Message, user_text

ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-6"
OPENAI_MODEL = "openai/gpt-4o"
LITELLM_MODEL = "openai/gpt-4o"
"""litellm serves what no SDK of ours does; it is tested on the same OpenAI
wire (sent as ``openai/...``, litellm speaks it as it does for every
OpenAI-compatible provider) so that both readers meet the same streams."""


@dataclass
class Result:
    events: list[StreamEvent]
    message: Message

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@dataclass
class Wire:
    name: str
    model: str
    provider: Provider
    server: FakeProvider
    api_key: str = "sk-test-key-0000000000000000"
    defaults: dict[str, Any] = field(default_factory=dict)

    @property
    def api_base(self) -> str:
        # the anthropic SDK appends /v1/messages; the OpenAI client appends /chat/completions
        return self.server.base_url if self.name == "anthropic" else self.server.base_url + "/v1"

    def request(self, *messages: Message | str, **changes: Any) -> ChatRequest:
        built = tuple(user_text(m) if isinstance(m, str) else m for m in messages) or (
            user_text("hello"),
        )
        fields: dict[str, Any] = {
            "model": self.model,
            "messages": built,
            "api_base": self.api_base,
            "api_key": self.api_key,
            "timeout": 5.0,
            **self.defaults,
            **changes,
        }
        return ChatRequest(**fields)

    async def run(self, request: ChatRequest | None = None) -> Result:
        request = request or self.request()
        builder = MessageBuilder(request.model, self.provider.name)
        events: list[StreamEvent] = []
        async for event in self.provider.stream(request):
            events.append(event)
            builder.add(event)
        return Result(events, builder.finish())

    @property
    def body(self) -> dict[str, Any]:
        """The JSON body of the last request the server received."""
        return self.server.last_request.body


def make_wire(name: str, server: FakeProvider) -> Wire:
    if name == "anthropic":
        return Wire(name, ANTHROPIC_MODEL, AnthropicProvider(), server)
    if name == "openai":
        return Wire(name, OPENAI_MODEL, OpenAIProvider(), server)
    return Wire(name, LITELLM_MODEL, LiteLLMProvider(), server)


@pytest.fixture
def anthropic_wire(fake_provider: FakeProvider) -> Wire:
    return make_wire("anthropic", fake_provider)


@pytest.fixture(params=["openai", "litellm"])
def openai_wire(request: pytest.FixtureRequest, fake_provider: FakeProvider) -> Wire:
    """The two readers of chat-completions streams: httpx directly and litellm."""
    return make_wire(request.param, fake_provider)


@pytest.fixture(params=["anthropic", "openai", "litellm"])
def wire(request: pytest.FixtureRequest, fake_provider: FakeProvider) -> Wire:
    return make_wire(request.param, fake_provider)
