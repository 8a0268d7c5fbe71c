"""Bodies read through litellm are bounded in size, not only in time (issue
37): an endless error body, a gzip bomb and a stream line without end end
with an error event having read only a bounded part. litellm is pointed at
the fake provider on the OpenAI wire (its ``openai`` SDK route), as in
tests/providers/conftest.py."""

from __future__ import annotations

import asyncio

from fake_provider import EndlessError, EndlessLine, FakeProvider, GzipBomb

from core.providers.base import ErrorEvent
from tests.integration.limits_run import BOUND
from tests.providers.conftest import make_wire

LINE_LIMIT = 16 * 1024 * 1024


def refused_line(error: ErrorEvent) -> bool:
    return error.error.kind == "bad_response" and "16 MB" in error.error.message


async def test_an_endless_error_body_through_litellm_is_read_in_part(
    fake_provider: FakeProvider,
) -> None:
    wire = make_wire("litellm", fake_provider)
    fake_provider.script(EndlessError(400))
    async with asyncio.timeout(60):
        result = await wire.run(wire.request(timeout=30.0))
    [error] = result.of(ErrorEvent)
    assert "400" in str(error.error.status or error.error.detail or error.error.message)
    assert fake_provider.endless_bytes < BOUND


async def test_a_gzip_bomb_error_body_through_litellm_is_an_error(
    fake_provider: FakeProvider,
) -> None:
    wire = make_wire("litellm", fake_provider)
    fake_provider.script(GzipBomb(400))
    async with asyncio.timeout(60):
        result = await wire.run(wire.request(timeout=30.0))
    assert result.of(ErrorEvent)


async def test_a_stream_line_without_end_through_litellm_is_refused(
    fake_provider: FakeProvider,
) -> None:
    """The openai SDK's event decoder keeps a line whole, however long: the
    bounded client refuses it at the line limit."""
    wire = make_wire("litellm", fake_provider)
    fake_provider.script(EndlessLine(after_chunks=3))
    async with asyncio.timeout(60):
        result = await wire.run(wire.request(timeout=30.0))
    [error] = result.of(ErrorEvent)
    assert refused_line(error), error
    assert fake_provider.endless_bytes < LINE_LIMIT + BOUND
