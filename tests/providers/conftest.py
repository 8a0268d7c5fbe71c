"""Fixtures for provider tests: a "wire" is one provider path (the anthropic SDK
or litellm) pointed at the fake provider server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from fake_provider import FakeProvider

from core.messages import Message, user_text
from core.providers.anthropic_provider import AnthropicProvider
from core.providers.assemble import MessageBuilder
from core.providers.base import ChatRequest, Provider, StreamEvent
from core.providers.litellm_provider import LiteLLMProvider

ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-6"
OPENAI_MODEL = "openai/gpt-4o"


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
    return Wire(name, OPENAI_MODEL, LiteLLMProvider(), server)


@pytest.fixture
def anthropic_wire(fake_provider: FakeProvider) -> Wire:
    return make_wire("anthropic", fake_provider)


@pytest.fixture
def litellm_wire(fake_provider: FakeProvider) -> Wire:
    return make_wire("litellm", fake_provider)


@pytest.fixture(params=["anthropic", "litellm"])
def wire(request: pytest.FixtureRequest, fake_provider: FakeProvider) -> Wire:
    return make_wire(request.param, fake_provider)
