"""The provider interface: a request in, typed stream events out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

from core.sessions.messages import Message, StopReason, Usage
from core.settings import Pace, no_pace


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class EndpointSlots:
    """How many requests this process may have in flight to one server at once
    (:mod:`core.providers.slots`)."""

    origin: str
    """``scheme://host:port`` of the server."""
    parallel: int


@dataclass(frozen=True)
class ChatRequest:
    model: str
    """litellm-style name: ``anthropic/claude-...``, ``openai/gpt-...``, ``demo``."""
    messages: tuple[Message, ...]
    system: str | None = None
    thinking: str = "off"
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 600.0
    images: Mapping[str, bytes] = field(default_factory=dict, repr=False, compare=False)
    """Image bytes by sha256, for every :class:`ImageContent` in ``messages``
    (the caller loads them from the blob table). An image whose bytes are
    missing is sent as a short text note instead of pixels."""
    near_window: bool = False
    """The request is estimated at a third of the model's window or more (the
    window may be a guess twice too large): a stream that then ends before a
    word is the server refusing a context too long for it (llama-cpp-python's
    server does that), not a lost connection."""
    slots: EndpointSlots | None = None
    """Each attempt waits for one of its server's slots; None: a hosted
    provider, not bounded here."""
    pace: Pace = field(default=no_pace, repr=False, compare=False)
    """Awaited between slices of reading the stream (:mod:`core.providers.pacing`):
    the front end's say in when reading goes on."""


# --- stream events ---------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str = ""
    signature: str | None = None
    """Set (possibly alone) when the provider sends the block's signature."""
    redacted: bool = False
    """A redacted thinking block: ``text`` holds the opaque data, sent back as it came."""
    new_block: bool = False
    """Starts a new thinking block rather than continuing the last one."""


@dataclass(frozen=True)
class ToolCallDelta:
    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    """A piece of the arguments' JSON text."""


@dataclass(frozen=True)
class UsageEvent:
    usage: Usage


@dataclass(frozen=True)
class Done:
    stop_reason: StopReason


@dataclass(frozen=True)
class ErrorEvent:
    error: ProviderError


StreamEvent = Union[TextDelta, ThinkingDelta, ToolCallDelta, UsageEvent, Done, ErrorEvent]
STREAM_EVENT_TYPES = (TextDelta, ThinkingDelta, ToolCallDelta, UsageEvent, Done, ErrorEvent)
"""For ``isinstance``: the types of :data:`StreamEvent`."""


# --- errors ----------------------------------------------------------------

ERROR_KINDS = (
    "auth",
    "rate_limit",
    "overloaded",
    "server",
    "timeout",
    "connection",
    "context_overflow",
    "refused",
    "bad_request",
    "bad_response",
)

_EXPLANATIONS = {
    "auth": "the API key was rejected (check the key for this provider)",
    "rate_limit": "rate limited by the provider",
    "overloaded": "the provider is overloaded",
    "server": "the provider had a server error",
    "timeout": "the request timed out",
    "connection": "could not reach the provider / the connection was lost",
    "context_overflow": "the conversation is too long for this model's context window",
    "refused": "the provider refused to answer this content",
    "bad_request": "the provider rejected the request",
    "bad_response": "the provider sent a response that could not be read",
}


class ProviderError(Exception):
    """A typed, explained provider failure. ``detail`` is already sanitized."""

    def __init__(
        self,
        kind: str,
        detail: str = "",
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown provider error kind: {kind!r}")
        self.kind = kind
        self.detail = detail
        self.status = status
        self.retry_after = retry_after
        super().__init__(self.message)

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limit", "overloaded", "server", "timeout", "connection")

    @property
    def message(self) -> str:
        head = _EXPLANATIONS[self.kind]
        if self.status is not None:
            head = f"{head} (HTTP {self.status})"
        if self.retry_after is not None and self.kind in ("rate_limit", "overloaded"):
            head = f"{head}; retry after {self.retry_after:g} s"
        return f"{head}: {self.detail}" if self.detail else head


class Provider(Protocol):
    name: str
    """Recorded on assistant messages: ``anthropic``, ``openai``, ``litellm`` or ``demo``."""

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Yield events; failures come as a final :class:`ErrorEvent`, never raised."""
        ...
