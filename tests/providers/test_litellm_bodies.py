"""Bodies read through litellm are bounded in size, not only in time (issue
37): an endless error body and a gzip bomb end with an error event having
read only a bounded part. litellm is pointed at the fake provider on the
OpenAI wire, as in tests/providers/conftest.py."""

from __future__ import annotations

import asyncio

from fake_provider import EndlessError, FakeProvider, GzipBomb

from core.providers.base import ErrorEvent
from tests.integration.limits_run import BOUND
from tests.providers.conftest import make_wire


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
