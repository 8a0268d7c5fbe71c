"""Every provider path (the anthropic SDK, httpx or h11, litellm) bounded by
:func:`core.providers.limits.bounded` against the fake server's silent and
trickling streams (issue 37). The limits are small settings, not timings."""

from __future__ import annotations

import asyncio

from fake_provider import Reply, Stall, Trickle

from core.providers.assemble import MessageBuilder
from core.providers.base import ErrorEvent, StreamEvent, TextDelta
from core.providers.limits import StreamLimits, bounded

HANG = 3600.0


async def bounded_run(wire, limits: StreamLimits, heard: list | None = None):
    request = wire.request()
    builder = MessageBuilder(request.model, wire.provider.name)
    events: list[StreamEvent] = []

    def on_silence(seconds: float, started: bool) -> None:
        assert heard is not None
        heard.append((int(seconds), started))

    async with asyncio.timeout(60):  # a hang fails the test instead of holding it
        stream = bounded(
            wire.provider.stream(request), limits, on_silence if heard is not None else None
        )
        async for event in stream:
            events.append(event)
            builder.add(event)
    return events, builder.finish()


async def test_silence_after_the_first_words_ends_at_the_idle_limit(wire) -> None:
    wire.server.script(Stall(HANG, after_chunks=6))
    events, message = await bounded_run(wire, StreamLimits(first_token=30, idle=1, total=60))
    assert any(isinstance(e, TextDelta) for e in events)
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].error.kind == "timeout" and "idle_timeout" in events[-1].error.detail
    assert message.stop_reason == "error" and message.text.startswith("echo: hello")


async def test_no_first_event_ends_at_the_first_token_limit_and_is_counted(wire) -> None:
    wire.server.script(Stall(HANG))
    heard: list = []
    events, message = await bounded_run(
        wire, StreamLimits(first_token=2.5, idle=30, total=60), heard
    )
    [error] = events
    assert isinstance(error, ErrorEvent) and "first_token_timeout" in error.error.detail
    # each whole second of the wait once, in order (a busy machine may skip one)
    seconds = [n for n, _ in heard]
    assert seconds and seconds == sorted(set(seconds)) and 1 <= seconds[0] <= seconds[-1] <= 2
    assert not any(started for _, started in heard)
    assert message.text == ""


async def test_a_trickle_ends_at_the_total_limit(wire) -> None:
    wire.server.script(Trickle(0.01, reply=Reply(text="a slow answer " * 20)))
    events, _ = await bounded_run(wire, StreamLimits(first_token=30, idle=30, total=2))
    assert isinstance(events[-1], ErrorEvent) and "max_time" in events[-1].error.detail


async def test_a_stream_within_the_limits_is_untouched(wire) -> None:
    wire.server.script(Reply(text="all of it", delay=0.05))
    events, message = await bounded_run(wire, StreamLimits(first_token=30, idle=30, total=60))
    assert not [e for e in events if isinstance(e, ErrorEvent)]
    assert message.text == "all of it" and message.stop_reason == "stop"
