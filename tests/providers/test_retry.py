"""The retry policy, through real providers and the fake server, with a recorded sleep."""

from __future__ import annotations

import asyncio
import socket

import pytest
from fake_provider import Fail, Reply, StreamError

from core.providers.assemble import MessageBuilder
from core.providers.base import ErrorEvent, ProviderError, TextDelta, UsageEvent
from core.providers.retry import backoff, stream_with_retry


class Clock:
    """A fake ``sleep`` that records how long it was asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


async def run(wire, request=None, **options):
    request = request or wire.request()
    builder = MessageBuilder(request.model, wire.provider.name)
    events = []
    async for event in stream_with_retry(wire.provider, request, **options):
        events.append(event)
        builder.add(event)
    return events, builder.finish()


async def test_429_with_retry_after_then_success(wire):
    wire.server.script(Fail(429, retry_after=1), Reply(text="second time lucky"))
    clock = Clock()
    waited: list[tuple[float, str]] = []
    events, message = await run(
        wire, sleep=clock.sleep, on_wait=lambda s, e: waited.append((s, e.kind))
    )
    assert clock.waits == [1.0]
    assert waited == [(1.0, "rate_limit")]
    assert message.text == "second time lucky"
    assert message.stop_reason == "stop"
    assert not any(isinstance(e, ErrorEvent) for e in events)
    assert len(wire.server.requests) == 2


async def test_async_on_wait_is_awaited(wire):
    wire.server.script(Fail(529), Reply(text="ok"))
    seen: list[float] = []

    async def on_wait(seconds: float, error: ProviderError) -> None:
        await asyncio.sleep(0)
        seen.append(seconds)

    _, message = await run(wire, sleep=Clock().sleep, on_wait=on_wait)
    assert seen == [1.0]
    assert message.text == "ok"


async def test_backoff_doubles_and_gives_up_after_max_attempts(wire):
    wire.server.script(*[Fail(500)] * 4)
    clock = Clock()
    events, message = await run(wire, sleep=clock.sleep, max_attempts=4)
    assert clock.waits == [1.0, 2.0, 4.0]
    assert len(wire.server.requests) == 4
    assert message.stop_reason == "error"
    assert [e.error.kind for e in events if isinstance(e, ErrorEvent)] == ["server"]


@pytest.mark.parametrize(
    "fault", [Fail(401), Fail(400), Fail(400, message="prompt is too long: 300000 tokens")]
)
async def test_no_retry_on_client_errors(wire, fault):
    wire.server.script(fault, Reply(text="never"))
    clock = Clock()
    _, message = await run(wire, sleep=clock.sleep)
    assert clock.waits == []
    assert len(wire.server.requests) == 1
    assert message.stop_reason == "error"


async def test_no_retry_after_the_first_token(wire):
    wire.server.script(
        StreamError(after_chunks=6, reply=Reply(text="began to answer and then", chunk_size=4))
    )
    clock = Clock()
    events, message = await run(wire, sleep=clock.sleep)
    assert clock.waits == []
    assert len(wire.server.requests) == 1
    assert any(isinstance(e, TextDelta) for e in events)
    assert message.stop_reason == "error"
    assert message.text


async def test_retry_after_longer_than_cap_is_not_waited(wire):
    wire.server.script(Fail(429, retry_after=120))
    clock = Clock()
    events, message = await run(wire, sleep=clock.sleep, cap=60.0)
    assert clock.waits == []
    (error,) = [e.error for e in events if isinstance(e, ErrorEvent)]
    assert error.retry_after == 120
    assert len(wire.server.requests) == 1


async def test_connection_refused_is_retried(wire):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    clock = Clock()
    events, _ = await run(
        wire, wire.request(api_base=f"http://127.0.0.1:{port}"), sleep=clock.sleep, max_attempts=3
    )
    assert clock.waits == [1.0, 2.0]
    assert [e.error.kind for e in events if isinstance(e, ErrorEvent)] == ["connection"]


async def test_usage_of_a_failed_attempt_is_not_passed_on(anthropic_wire):
    """A stream that fails after message_start (usage known) and before content is retried cleanly."""
    anthropic_wire.server.script(
        StreamError(after_chunks=2), Reply(text="fine", usage={"input_tokens": 11})
    )
    events, message = await run(anthropic_wire, sleep=Clock().sleep)
    usages = [e for e in events if isinstance(e, UsageEvent)]
    assert len(usages) == 1 and usages[0].usage.input_tokens == 11
    assert message.text == "fine"


async def test_cancelling_during_the_wait_propagates(wire):
    wire.server.script(Fail(429, retry_after=30))
    waiting = asyncio.Event()

    def on_wait(seconds: float, error: ProviderError) -> None:
        waiting.set()

    task = asyncio.create_task(run(wire, on_wait=on_wait))
    await asyncio.wait_for(waiting.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_backoff_values():
    error = ProviderError("server")
    assert [backoff(n, error, 60) for n in (1, 2, 3, 4, 8)] == [1, 2, 4, 8, 60]
    assert backoff(1, ProviderError("rate_limit", retry_after=3.5), 60) == 3.5
    assert backoff(1, ProviderError("rate_limit", retry_after=61), 60) is None
