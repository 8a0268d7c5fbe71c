"""Our retry policy around a provider stream.

A failure is retried only before the reply has started (no text, thinking or
tool call yet): after that, retrying would show the user a second, different
beginning. Only transient kinds are retried (``ProviderError.retryable``);
auth, bad requests, context overflow and refusals go straight to the caller.
The SDKs' own retries are off, so this is the only policy.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import cast

from core.providers.base import (
    ChatRequest,
    Done,
    ErrorEvent,
    Provider,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from core.providers.outcome import as_overflow
from core.providers.slots import slot

OnWait = Callable[[float, ProviderError], "Awaitable[None] | None"]
_STARTS = (TextDelta, ThinkingDelta, ToolCallDelta, Done, ErrorEvent)
"""Events that settle an attempt: content, or how it ended."""


def backoff(attempt: int, error: ProviderError, cap: float) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``; None when not worth waiting.

    The server's Retry-After wins when it is within ``cap``; a longer one means
    "not soon", so the error goes to the user (its message says how long).
    Otherwise 1, 2, 4, ... seconds, capped.
    """
    if error.retry_after is not None:
        return error.retry_after if error.retry_after <= cap else None
    return min(float(2 ** (attempt - 1)), cap)


async def stream_with_retry(
    provider: Provider,
    request: ChatRequest,
    *,
    max_attempts: int = 4,
    cap: float = 60.0,
    on_wait: OnWait | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncGenerator[StreamEvent, None]:
    """Provider events, retrying transient failures that happen before any content.

    Events before the first content (usage of a failed attempt) are held back
    until the attempt is known to stand. ``on_wait(seconds, error)`` is called
    before each wait (the UI's countdown); cancelling the consumer cancels the
    wait and the stream alike. Each attempt holds one of the request's server
    slots (:mod:`core.providers.slots`) until it ends; a wait holds none.
    """
    for attempt in range(1, max_attempts + 1):
        held: list[StreamEvent] = []
        started = False
        retry_error: ProviderError | None = None
        # Every provider's stream is an async generator (closed here when cut short).
        stream = cast(AsyncGenerator[StreamEvent, None], provider.stream(request))
        async with slot(request.slots), aclosing(stream) as events:
            async for event in events:
                if not started:
                    if isinstance(event, ErrorEvent):
                        event = ErrorEvent(as_overflow(event.error, request))
                    if (
                        isinstance(event, ErrorEvent)
                        and event.error.retryable
                        and attempt < max_attempts
                    ):
                        retry_error = event.error
                        break
                    if not isinstance(event, _STARTS):
                        held.append(event)
                        continue
                    started = True
                    for earlier in held:
                        yield earlier
                    held.clear()
                yield event
        if retry_error is None:
            for event in held:
                yield event
            return
        delay = backoff(attempt, retry_error, cap)
        if delay is None:
            yield ErrorEvent(retry_error)
            return
        if on_wait is not None:
            waiting = on_wait(delay, retry_error)
            if inspect.isawaitable(waiting):
                await waiting
        await sleep(delay)
