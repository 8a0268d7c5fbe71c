"""The streamable-HTTP transport for MCP servers, with big bodies parsed off
the event loop.

The ``mcp`` client parses and validates every response on the event loop: a
server listing 100,000 tools in one body held it for minutes. Its HTTP client
is given a transport that reads each JSON body (at most :data:`MAX_BODY`
bytes, counted after decompression) and each long ``data:`` line of an event
stream, and cuts a tool list in it off the event loop (core.tools.tool_list;
counted in the handle's ``tools_cut``, as for stdio).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2

from core.providers.bodies import read_head
from core.tools.mcp_stdio import BIG_LINE, MAX_LINE, StdioProcess
from core.tools.tool_list import trimmed

MAX_BODY = MAX_LINE
"""Longest JSON body or event line read; a longer one is dropped (the request fails)."""
CONNECT_SECONDS = 30.0
READ_SECONDS = 300.0
"""The ``mcp`` package's own timeouts: a server may hold an event stream open."""


@asynccontextmanager
async def http_transport(url: str, handle: StdioProcess) -> AsyncIterator[Any]:
    """The (read, write) streams ``mcp.Client`` expects, for the server at ``url``."""
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(
        transport=_Parsing(httpx2.AsyncHTTPTransport(), handle),
        timeout=httpx2.Timeout(CONNECT_SECONDS, read=READ_SECONDS),
    )
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


class _Parsing(httpx2.AsyncBaseTransport):
    """An httpx2 transport around another, rewriting JSON and event-stream bodies."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, handle: StdioProcess) -> None:
        self._inner = inner
        self._handle = handle

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if kind not in ("application/json", "text/event-stream"):
            return response
        # A response over the raw stream decodes it (gzip, ...) as it is read.
        decoded = httpx2.Response(
            response.status_code, headers=response.headers, stream=response.stream
        )
        body = self._json(decoded) if kind == "application/json" else self._events(decoded)
        skip = {"content-encoding", "content-length"}
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in skip]
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_Stream(body, decoded),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def _json(self, decoded: httpx2.Response) -> AsyncIterator[bytes]:
        body, more = await read_head(decoded, MAX_BODY)
        if not more:
            yield await self._parsed(body)

    async def _events(self, decoded: httpx2.Response) -> AsyncIterator[bytes]:
        line = bytearray()
        dropping = False  # inside a line longer than MAX_BODY
        async for chunk in decoded.aiter_bytes():
            while chunk:
                head, newline, chunk = chunk.partition(b"\n")
                if not dropping:
                    line += head
                    dropping = len(line) > MAX_BODY
                if dropping:
                    line.clear()
                if newline:
                    if not dropping:
                        yield await self._event_line(bytes(line)) + b"\n"
                    line.clear()
                    dropping = False
        if line:
            yield await self._event_line(bytes(line))

    async def _event_line(self, line: bytes) -> bytes:
        if len(line) <= BIG_LINE or not line.startswith(b"data:"):
            return line
        return b"data: " + await self._parsed(line[5:].strip())

    async def _parsed(self, body: bytes) -> bytes:
        if len(body) <= BIG_LINE:
            return body
        body, cut = await trimmed(body)
        self._handle.tools_cut += cut
        return body


class _Stream(httpx2.AsyncByteStream):
    """An httpx2 async byte stream over ``body``, closing ``decoded`` at the end."""

    def __init__(self, body: AsyncIterator[bytes], decoded: httpx2.Response) -> None:
        self._body = body
        self._decoded = decoded

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._body:
            yield part

    async def aclose(self) -> None:
        await self._decoded.aclose()
