"""OpenAI-compatible endpoints (``openai/...``, custom ``[[endpoints]]``,
``--api-base``): the stream read by :mod:`core.providers.openai_http`, sent
with httpx, the one HTTP client of every request.

litellm reads these streams through its own wrapper and reports a cut stream
as finished; read as JSON lines, a chunk is cheap and a stream without a
finish reason is seen as interrupted. Neither litellm nor the openai SDK is
imported: httpx loads in a fraction of the SDK's time, in the background from
the program's start, so a message sent right after launch is not held back. The request is the one litellm sent: the model
without its ``openai/`` prefix, usage asked for with ``stream_options``,
``reasoning_effort`` only where litellm forwarded it (models its table says
reason, and models it does not know: a proxy's own names),
``max_completion_tokens`` in place of ``max_tokens`` for reasoning models.
Errors are classified by :func:`core.providers.errors.to_provider_error` like
every provider's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any

from core.providers import bodies, http_clients, line_limit, openai_format, openai_http, sdk, tls
from core.providers.base import ChatRequest, StreamEvent
from core.providers.cost import price_table
from core.providers.errors import to_provider_error
from core.providers.openai_chunks import ChunkReader
from core.providers.openai_http import DEFAULT_BASE_URL
from core.providers.pacing import LoopShare
from core.sessions.messages import user_text

PREFIX = "openai/"


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


MISSING_KEY = (
    "no API key: set OPENAI_API_KEY, or give the server's base URL (--api-base) for a local one"
)


class MissingKeyError(Exception):
    """No key and no base URL: the request would go to api.openai.com without one."""


class OpenAIProvider:
    name = "openai"

    def preload(self, api_base: str | None = None) -> None:
        base_url = api_base or DEFAULT_BASE_URL
        sdk.preload("httpx", prepare)
        if tls.needs_trust_store(base_url):
            tls.preload()

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        reader = ChunkReader(request.model)
        share = LoopShare(request.pace)
        api_key = request.api_key
        try:
            # The target decided base and key (core.chat.target); a local
            # server (llama.cpp, vLLM, LM Studio) needs no key.
            api_key = request.api_key or (NO_KEY if request.api_base else None)
            if api_key is None:
                raise MissingKeyError(MISSING_KEY)
            base_url = request.api_base or DEFAULT_BASE_URL
            client = await httpx_client(base_url)
            async with openai_http.chunks(
                client, base_url, api_key, request_params(request), timeout=request.timeout
            ) as chunks:
                async for chunk in chunks:
                    for event in reader.events(chunk):
                        yield event
                    await share.tick()
        except Exception as exc:  # every failure becomes an event: the stream never raises
            reader.error = to_provider_error(exc, api_key=None if api_key == NO_KEY else api_key)
        for event in reader.ending():
            yield event


async def httpx_client(base_url: str) -> Any:
    """The loop's httpx client, for requests to ``base_url`` (its TLS trust store
    read first if it is https). Its hooks bound every body it receives: an
    error's whole (:mod:`core.providers.bodies`), any other's lines
    (:mod:`core.providers.line_limit`)."""
    httpx = await sdk.loaded("httpx", prepare)
    verify = await tls.ready(base_url)
    return http_clients.shared(
        "httpx",
        lambda: httpx.AsyncClient(
            verify=verify,
            follow_redirects=True,
            event_hooks={
                "response": [bodies.error_body_hook(httpx), line_limit.line_limit_hook(httpx)]
            },
        ),
    )


def _model_info(model: str) -> Mapping[str, Any] | None:
    table = price_table()
    entry = table.get(model) or table.get(PREFIX + model)
    return (
        entry if isinstance(entry, Mapping) and entry.get("litellm_provider") == "openai" else None
    )


def _first_connection_modules() -> None:
    """What httpx, httpcore and anyio import only when the first real
    connection opens (~0.2 s on a busy machine): imported here, off the loop."""
    import importlib

    _import_httpcore_without_h2()
    for name in (
        "httpcore._async.connection_pool",
        "httpcore._async.connection",
        "httpcore._async.http11",
        "httpcore._backends.anyio",
        "anyio.streams.memory",
        "anyio.streams.tls",
        "anyio._core._sockets",
        "anyio._backends._asyncio",
    ):
        importlib.import_module(name)


def _import_httpcore_without_h2() -> None:
    """httpcore imports h2 (HTTP/2, with hpack's Huffman tables: a good part of
    the first request's wait) at its own import only to re-export its HTTP/2
    connection class; its connections import that module themselves when one
    is asked for HTTP/2, which no request here is. So h2 is hidden while
    httpcore is imported (its import raises ImportError then), and stays
    importable for them."""
    if "httpcore" in sys.modules or "h2" in sys.modules:
        return
    sys.modules["h2"] = None  # type: ignore[assignment]
    try:
        import httpcore  # noqa: F401
    finally:
        del sys.modules["h2"]


def prepare(httpx: Any) -> None:
    """In the import thread: one whole request to an in-memory transport, so
    that what httpx makes or imports on a first request (request building,
    the stream decoder, anyio) is done off the loop; and the model table and
    the shared TLS context (the process's first reads OpenSSL's configuration).
    Its trust store is read by :meth:`OpenAIProvider.preload` when the
    endpoint is https (a local server's plain http needs none)."""
    import asyncio

    import anyio  # noqa: F401  # httpcore imports it at its first connection

    price_table()
    tls.context()
    _first_connection_modules()
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

    def respond(_: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async def one_request() -> None:
        request = ChatRequest(model=PREFIX + "warm-up", messages=(user_text("hi"),))
        reader = ChunkReader(request.model)
        async with (
            httpx.AsyncClient(transport=httpx.MockTransport(respond)) as client,
            openai_http.chunks(
                client,
                "http://warm-up.invalid/v1",
                "warm-up",
                request_params(request),
                timeout=None,
            ) as chunks,
        ):
            async for chunk in chunks:
                reader.events(chunk)

    asyncio.run(one_request())
