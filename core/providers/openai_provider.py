"""OpenAI-compatible endpoints (``openai/...``, custom ``[[endpoints]]``,
``--api-base``) through the ``openai`` SDK directly.

litellm reads these streams through its own wrapper at ~1 ms a chunk and
reports a cut stream as finished; the SDK parses a chunk in ~0.1 ms and hands
over the chunks as they came, so a stream without a finish reason is seen as
interrupted. The request is the one litellm sent: the model without its
``openai/`` prefix, usage asked for with ``stream_options``, ``reasoning_effort``
only where litellm forwarded it (models its table says reason, and models it
does not know: a proxy's own names), ``max_completion_tokens`` in place of
``max_tokens`` for reasoning models. Errors are classified by
:func:`core.providers.errors.to_provider_error` like every provider's.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from functools import cache
from typing import Any

from core.messages import user_text
from core.providers import openai_format, sdk
from core.providers.base import ChatRequest, StreamEvent
from core.providers.cost import price_table
from core.providers.errors import to_provider_error
from core.providers.openai_chunks import ChunkReader
from core.providers.pacing import LoopShare

PREFIX = "openai/"


def serves(model: str) -> bool:
    return model.startswith(PREFIX)


def request_params(request: ChatRequest) -> dict[str, Any]:
    """The body of the chat-completions request."""
    model = request.model.removeprefix(PREFIX)
    info = _model_info(model)
    reasons = info is None or bool(info.get("supports_reasoning"))
    params: dict[str, Any] = {
        "model": model,
        "messages": openai_format.to_messages(request),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.max_tokens:
        known_reasoner = info is not None and bool(info.get("supports_reasoning"))
        params["max_completion_tokens" if known_reasoner else "max_tokens"] = request.max_tokens
    if request.thinking != "off" and reasons:
        params["reasoning_effort"] = request.thinking
    if request.tools:
        params["tools"] = openai_format.tools(request)
    return params


NO_KEY = "no-key"
"""Sent to an explicit base URL when no key is set."""


class OpenAIProvider:
    name = "openai"

    def preload(self) -> None:
        sdk.preload("openai", prepare)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        reader = ChunkReader(request.model)
        share = LoopShare()
        try:
            openai = await sdk.loaded("openai", prepare)
            base_url = request.api_base or os.environ.get("OPENAI_API_BASE") or None
            client = openai.AsyncOpenAI(
                # A local server (llama.cpp, vLLM, LM Studio) needs no key, but
                # the SDK refuses to start without one.
                api_key=request.api_key
                or os.environ.get("OPENAI_API_KEY")
                or (NO_KEY if base_url else None),
                base_url=base_url,
                max_retries=0,  # our own policy: core.providers.retry
                timeout=request.timeout,
                http_client=openai.DefaultAsyncHttpxClient(
                    verify=_tls_context(), timeout=request.timeout
                ),
            )
            async with client:
                chunks = await open_stream(openai, client, request_params(request))
                async with chunks:
                    async for chunk in chunks:
                        for event in reader.events(chunk):
                            yield event
                        await share.tick()
        except Exception as exc:  # every failure becomes an event: the stream never raises
            reader.error = to_provider_error(exc, api_key=request.api_key)
        for event in reader.ending():
            yield event


async def open_stream(openai: Any, client: Any, body: dict[str, Any]) -> Any:
    """POST the body as it is and read the chunks as JSON (``object``: no
    models). ``chat.completions.create`` would first walk the whole body
    against the SDK's type hints (~20 ms for a short conversation, growing
    with it) only to send the same JSON, and build a model of every chunk
    (~0.3 ms each) only to be read field by field."""
    return await client.post(
        "/chat/completions",
        body=body,
        cast_to=object,
        stream=True,
        stream_cls=openai.AsyncStream[object],
    )


@cache
def _tls_context() -> Any:
    """One TLS context for every request: making one reads the CA bundle (~25 ms)."""
    import httpx

    return httpx.create_ssl_context()


def _model_info(model: str) -> Mapping[str, Any] | None:
    table = price_table()
    entry = table.get(model) or table.get(PREFIX + model)
    return (
        entry if isinstance(entry, Mapping) and entry.get("litellm_provider") == "openai" else None
    )


def prepare(openai: Any) -> None:
    """In the import thread: one whole request through the SDK to an in-memory
    transport, so that what the SDK and httpx make or import on a first request
    (request building, the stream decoder, anyio) is done off the loop; and
    the TLS context and the model table."""
    import asyncio

    import anyio  # noqa: F401  # httpcore imports it at its first connection
    import httpx

    price_table()
    _tls_context()
    sample = json.dumps(
        {
            "id": "warm-up",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "warm-up",
            "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )
    body = f"data: {sample}\n\ndata: [DONE]\n\n".encode()

    def respond(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async def one_request() -> None:
        transport = httpx.MockTransport(respond)
        async with openai.AsyncOpenAI(
            api_key="warm-up",
            base_url="http://warm-up.invalid/v1",
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(transport=transport),
        ) as client:
            request = ChatRequest(model=PREFIX + "warm-up", messages=(user_text("hi"),))
            stream = await open_stream(openai, client, request_params(request))
            reader = ChunkReader(request.model)
            async with stream:
                async for chunk in stream:
                    reader.events(chunk)

    asyncio.run(one_request())
