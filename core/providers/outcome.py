"""How a provider stream ends, decided the same way for every provider."""

from __future__ import annotations

from core.providers.base import (
    ChatRequest,
    Done,
    ErrorEvent,
    ProviderError,
    StreamEvent,
    UsageEvent,
)
from core.sessions.messages import StopReason, Usage

ENDED_EARLY = "the stream ended without a stop reason"


def final_events(
    usage: Usage | None,
    stop_reason: StopReason | None,
    error: ProviderError | None,
    has_content: bool,
) -> list[StreamEvent]:
    """Usage (when known), then ``Done`` or ``ErrorEvent``.

    A stream that stopped without a stop reason, or lost its connection, after
    some content is an interrupted reply (kept and marked); before any content
    it is a connection error, so the retry policy may try again.
    """
    events: list[StreamEvent] = [UsageEvent(usage)] if usage is not None else []
    if error is None and stop_reason is None:
        error = ProviderError("connection", ENDED_EARLY)
    if error is None:
        events.append(Done(stop_reason))  # type: ignore[arg-type]  # not None here
    elif error.kind == "connection" and has_content:
        events.append(Done("interrupted"))
    else:
        events.append(ErrorEvent(error))
    return events


def as_overflow(error: ProviderError, request: ChatRequest) -> ProviderError:
    """A stream that ended before a word after a request near the model's window
    is taken as the server's way of saying the context is too long."""
    if request.near_window and error.kind == "connection" and error.detail == ENDED_EARLY:
        return ProviderError(
            "context_overflow",
            "the server ended the stream before a word, after a request near the context window",
        )
    return error
