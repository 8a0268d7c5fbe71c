"""Bodies read through litellm are bounded in size, not only in time (issue
37): an endless error body, a gzip bomb, a stream line without end and a
success body that never ends a line end with an error event having read only
a bounded part. litellm is pointed at the fake provider: on the OpenAI wire
(its ``openai`` SDK route, as in tests/providers/conftest.py), and on the
routes it reads with its own HTTP handler (Gemini, Ollama)."""

from __future__ import annotations

import asyncio

import pytest
from fake_provider import EndlessError, EndlessLine, FakeProvider, GzipBomb

from core.providers.base import Done, ErrorEvent
from core.providers.litellm_provider import LiteLLMProvider
from tests.integration.limits_run import BOUND
from tests.providers.conftest import Wire, make_wire

OWN_WIRE_MODELS = ["gemini/gemini-test", "ollama/llama-test", "ollama_chat/llama-test"]
"""Models litellm sends with its own ``AsyncHTTPHandler``, on their own wire."""
OPENAI_WIRE_MODELS = [
    f"{route}/model-test"
    for route in ("openrouter", "groq", "mistral", "deepseek", "together_ai", "hosted_vllm", "xai")
]
"""Models litellm sends with its own ``AsyncHTTPHandler`` on the OpenAI wire."""
OWN_HANDLER_MODELS = OWN_WIRE_MODELS + OPENAI_WIRE_MODELS
LINE_LIMIT = 16 * 1024 * 1024


def own_handler_wire(model: str, server: FakeProvider) -> Wire:
    base = server.base_url if model in OWN_WIRE_MODELS else server.base_url + "/v1"
    return Wire("litellm", model, LiteLLMProvider(), server, defaults={"api_base": base})


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


async def test_an_event_without_end_through_litellm_is_refused(
    fake_provider: FakeProvider,
) -> None:
    """Short lines and never the blank line that ends an event: the openai
    SDK's decoder keeps every line of an event until that blank line, copying
    it whole for each, so the event is refused by its count of lines."""
    wire = make_wire("litellm", fake_provider)
    fake_provider.script(EndlessLine(after_chunks=3, short_lines=True))
    async with asyncio.timeout(60):
        result = await wire.run(wire.request(timeout=30.0))
    [error] = result.of(ErrorEvent)
    assert error.error.kind == "bad_response"
    assert "more than a thousand lines" in error.error.message
    assert fake_provider.endless_bytes < BOUND


@pytest.mark.parametrize("model", OWN_HANDLER_MODELS)
async def test_a_reply_on_litellms_own_handler_arrives_whole(
    fake_provider: FakeProvider, model: str
) -> None:
    wire = own_handler_wire(model, fake_provider)
    async with asyncio.timeout(60):
        result = await wire.run(wire.request("tell me", timeout=30.0))
    assert not result.of(ErrorEvent)
    assert result.of(Done)
    assert "".join(getattr(b, "text", "") for b in result.message.content) == "echo: tell me"


@pytest.mark.parametrize("model", OWN_HANDLER_MODELS)
@pytest.mark.parametrize("bad", [EndlessError(400), GzipBomb(400)], ids=["endless", "gzip-bomb"])
async def test_an_error_body_over_the_limit_on_litellms_own_handler_is_an_error(
    fake_provider: FakeProvider, model: str, bad: EndlessError | GzipBomb
) -> None:
    wire = own_handler_wire(model, fake_provider)
    fake_provider.script(bad)
    async with asyncio.timeout(60):
        result = await wire.run(wire.request(timeout=30.0))
    [error] = result.of(ErrorEvent)
    assert error.error.status == 400, error
    assert fake_provider.endless_bytes < BOUND


@pytest.mark.parametrize("model", OWN_HANDLER_MODELS)
@pytest.mark.parametrize(
    "bad",
    [EndlessLine(after_chunks=0), EndlessLine(after_chunks=2), GzipBomb(200)],
    ids=["endless-line-first", "endless-line-later", "gzip-bomb"],
)
async def test_a_success_body_over_the_limit_on_litellms_own_handler_is_refused(
    fake_provider: FakeProvider, model: str, bad: EndlessLine | GzipBomb
) -> None:
    """A body that never ends a line (a gigabyte of spaces once decompressed)."""
    wire = own_handler_wire(model, fake_provider)
    fake_provider.script(bad)
    async with asyncio.timeout(60):
        result = await wire.run(wire.request(timeout=30.0))
    [error] = result.of(ErrorEvent)
    assert refused_line(error), error
    assert fake_provider.endless_bytes < LINE_LIMIT + BOUND
