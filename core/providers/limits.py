"""Limits that keep a stream from holding a reply open: one for the first
event, one for silence once the reply has begun, one for the whole reply.

Each provider's own timeout bounds a single read, so a server that sends a
byte now and then, or keeps the connection open after its last chunk, could
hold a reply for as long as it liked. :func:`bounded` wraps the stream of
events (every provider's, with its retries) and ends it with a ``timeout``
:class:`ErrorEvent` naming the setting that ran out; the turn saves what
arrived with that reason. While nothing arrives it reports, once a second,
how long it has waited, for the front ends to show.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.providers.base import ErrorEvent, ProviderError, StreamEvent

if TYPE_CHECKING:
    from core.settings import Settings

OnSilence = Callable[[float, bool], None]
"""Called with the seconds waited so far and whether the reply has begun."""


@dataclass(frozen=True)
class StreamLimits:
    """Seconds; the defaults are the settings' (:class:`core.settings.Settings`)."""

    first_token: float = 300.0
    idle: float = 60.0
    total: float = 1800.0

    @classmethod
    def of(cls, settings: Settings) -> StreamLimits:
        """The limits ``settings`` set (``first_token_timeout``, ``idle_timeout``, ``max_time``)."""
        return cls(settings.first_token_timeout, settings.idle_timeout, settings.max_time)


@dataclass
class _Clock:
    start: float
    last: float
    started: bool = False

    def deadline(self, limits: StreamLimits) -> tuple[float, str]:
        """When the stream is given up, and the one-line reason then."""
        end = self.start + limits.total
        total = f"the reply took longer than {limits.total:g} s (max_time)"
        if self.started:
            idle = self.last + limits.idle
            reason = f"the server sent nothing for {limits.idle:g} s (idle_timeout)"
        else:
            idle = self.start + limits.first_token
            reason = f"no answer within {limits.first_token:g} s (first_token_timeout)"
        return (idle, reason) if idle < end else (end, total)


async def bounded(
    events: AsyncGenerator[StreamEvent, None],
    limits: StreamLimits,
    on_silence: OnSilence | None = None,
) -> AsyncIterator[StreamEvent]:
    """``events`` until they end or a limit runs out (then a last ``timeout``
    error; ``events`` is closed, which closes its connection)."""
    loop = asyncio.get_running_loop()
    now = loop.time()
    clock = _Clock(now, now)
    reporter = asyncio.ensure_future(_report(clock, on_silence)) if on_silence else None
    try:
        async with aclosing(events):
            while True:
                deadline, reason = clock.deadline(limits)
                try:
                    async with asyncio.timeout_at(deadline):
                        event = await anext(events)
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    yield ErrorEvent(ProviderError("timeout", reason))
                    return
                clock.last = loop.time()
                clock.started = True
                yield event
    finally:
        if reporter is not None:
            reporter.cancel()


async def _report(clock: _Clock, on_silence: OnSilence) -> None:
    """``on_silence`` at each whole second of a silence."""
    loop = asyncio.get_running_loop()
    while True:
        waited = loop.time() - clock.last
        await asyncio.sleep(math.floor(waited) + 1 - waited)
        waited = loop.time() - clock.last
        if waited >= 1:
            on_silence(waited, clock.started)
