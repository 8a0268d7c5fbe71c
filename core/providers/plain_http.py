"""HTTP/1.1 to a plain-http server (llama.cpp, vLLM, LM Studio, Ollama, the fake
provider) over asyncio's streams, with h11 (the parser httpcore itself uses)
reading and writing the messages.

The first message after launch waits for its client. httpx, with httpcore and
anyio, takes ~55 ms to import on a quiet machine and 110-130 ms while the app
draws its first screens (the import thread and the loop share the GIL); h11
takes ~7 ms. So a request that needs nothing httpx adds (:func:`serves`: no
TLS, no credentials in the URL, no proxy) goes this way, and a redirect is
handed to the client given for it (httpx, which follows it).

:class:`Client` has the part of httpx's surface that
:mod:`core.providers.openai_http` and :mod:`core.providers.sse` use: ``stream()``
as an async context manager, and a response with ``status_code``, ``headers``,
``aiter_bytes()``, ``aread()``, ``text`` and ``json()``. As in httpx, the
timeout bounds each operation (the connect, each read, each write), not the
whole request. A connection whose response was read to its end is kept for
the next request to the same server (one idle per server); one the server
closed meanwhile is replaced once, before any of its answer was read.
Failures are ``OSError``: ``TimeoutError``, ``ConnectionError`` (a broken
message is :class:`RemoteProtocolError`), a name that does not resolve; or
``ValueError`` for a request that cannot be sent (a header with a line break).
"""

from __future__ import annotations

import asyncio
import json as json_module
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, nullcontext
from types import ModuleType
from typing import Any
from urllib.parse import quote, urlsplit

from core.providers import sdk

READ_SIZE = 65536
USER_AGENT = "tangents"
_TARGET_SAFE = "/%:@!$&'()*+,;=-._~"
"""What a path may hold unencoded (RFC 3986's pchar, and ``%`` of escapes already made)."""


class RemoteProtocolError(ConnectionError):
    """The server's answer is not HTTP/1.1, or ended in the middle of a message."""


def serves(url: str, *, proxies: bool = True) -> bool:
    """Whether a request to ``url`` needs nothing but this: plain ``http``, no
    user or password in it, and (with ``proxies``: a client that honours the
    environment's, as httpx does by default) no proxy set for http."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or "@" in parts.netloc:
        return False
    return not (proxies and _http_proxy_set())


def _http_proxy_set() -> bool:
    """An ``http_proxy`` or ``all_proxy`` (any case), or on macOS and Windows
    the system's proxy for http: what httpx would send this request through."""
    if sys.platform in ("darwin", "win32"):
        import urllib.request  # ~10 ms; only where proxies live outside the environment

        found = urllib.request.getproxies()
    else:
        found = {
            name.lower().removesuffix("_proxy"): value
            for name, value in os.environ.items()
            if value and name.lower().endswith("_proxy")
        }
    return bool(found.get("http") or found.get("all"))


class Response:
    """A response whose head has been read; its body is read on demand."""

    def __init__(self, connection: _Connection, status_code: int, headers: dict[str, str]):
        self._connection = connection
        self.status_code = status_code
        self.headers = headers
        self.content = b""
        self._read_all = False

    @property
    def is_redirect(self) -> bool:
        return 300 <= self.status_code < 400 and "location" in self.headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        h11 = self._connection.h11
        while not self._read_all:
            event = await self._connection.next_event()
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._read_all = True
                self._connection.finished()

    async def aread(self) -> bytes:
        self.content = b"".join([chunk async for chunk in self.aiter_bytes()])
        return self.content

    @property
    def text(self) -> str:
        """The body read, as UTF-8 (JSON's encoding): only error bodies are read as text."""
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json_module.loads(self.content)


class Client:
    """Requests to plain-http servers, on the running loop (a connection belongs
    to the loop it was opened on). ``redirects``, when given, is awaited for
    the client a redirected stream is sent again with."""

    def __init__(self, redirects: Callable[[], Awaitable[Any]] | None = None) -> None:
        self._redirects = redirects
        self._idle: dict[tuple[str, int], _Connection] = {}
        self.is_closed = False

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[Response]:
        """The response, its body read as the block reads it; the connection is
        closed at the block's end unless the body was read to its end."""
        response = await self._send(method, url, json, headers or {}, timeout)
        try:
            if response.is_redirect and self._redirects is not None:
                response._connection.close()
                followed = (await self._redirects()).stream(
                    method, url, json=json, headers=headers, timeout=timeout
                )
                async with followed as answer:
                    yield answer
            else:
                yield response
        finally:
            response._connection.close_unless_finished()

    async def request(
        self, method: str, url: str, *, json: Any = None, timeout: float | None = None
    ) -> Response:
        """The response with its body read (``content``); a redirect is followed
        only by a client given ``redirects``."""
        async with self.stream(method, url, json=json, timeout=timeout) as response:
            await response.aread()
        return response

    async def aclose(self) -> None:
        self.is_closed = True
        for connection in self._idle.values():
            connection.close()
        self._idle.clear()

    async def _send(
        self, method: str, url: str, body: Any, headers: dict[str, str], timeout: float | None
    ) -> Response:
        h11 = await sdk.loaded("h11")
        parts = urlsplit(url)
        origin = (parts.hostname or "", parts.port or 80)
        # As httpx sends it: characters a request target may not hold percent-encoded.
        target = quote(parts.path or "/", safe=_TARGET_SAFE) + (
            f"?{quote(parts.query, safe=_TARGET_SAFE + '?')}" if parts.query else ""
        )
        content = b""
        sent = {"Host": parts.netloc, "User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if body is not None:
            content = json_module.dumps(
                body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode()
            sent["Content-Type"] = "application/json"
        if body is not None or method not in ("GET", "HEAD"):
            sent["Content-Length"] = str(len(content))
        sent.update(headers)
        try:
            request = h11.Request(method=method, target=target, headers=list(sent.items()))
        except h11.LocalProtocolError as error:  # a header that cannot be sent (a line break)
            raise ValueError(f"cannot send this request: {error}") from None
        while True:
            connection = self._idle.pop(origin, None)
            reused = connection is not None and connection.usable()
            if connection is None or not reused:
                if connection is not None:
                    connection.close()
                connection = await _Connection.open(h11, origin, timeout, self)
            try:
                return await connection.exchange(request, content, timeout)
            except BaseException as error:
                connection.close()
                if reused and not connection.answered and isinstance(error, ConnectionError):
                    continue  # the server had closed the idle connection: once more, on a new one
                raise

    def _keep(self, connection: _Connection) -> None:
        old = self._idle.pop(connection.origin, None)
        if old is not None:
            old.close()
        if self.is_closed:
            connection.close()
        else:
            self._idle[connection.origin] = connection


class _Connection:
    def __init__(
        self,
        h11: ModuleType,
        origin: tuple[str, int],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        timeout: float | None,
        client: Client,
    ) -> None:
        self.h11 = h11
        self.origin = origin
        self.timeout = timeout
        self.answered = False
        self._state = h11.Connection(h11.CLIENT)
        self._reader = reader
        self._writer = writer
        self._client = client
        self._finished = False

    @classmethod
    async def open(
        cls, h11: ModuleType, origin: tuple[str, int], timeout: float | None, client: Client
    ) -> _Connection:
        async with _limit(timeout):
            reader, writer = await asyncio.open_connection(*origin, limit=READ_SIZE)
        return cls(h11, origin, reader, writer, timeout, client)

    def usable(self) -> bool:
        return not (self._reader.at_eof() or self._writer.is_closing())

    async def exchange(self, request: Any, content: bytes, timeout: float | None) -> Response:
        """Send ``request`` and its body; the response once its head is read
        (``timeout``: this request's, for each write and read)."""
        h11 = self.h11
        self.timeout = timeout
        self.answered = False
        self._finished = False
        events = (
            [request, h11.Data(data=content), h11.EndOfMessage()]
            if content
            else [request, h11.EndOfMessage()]
        )
        self._writer.write(b"".join(self._state.send(event) or b"" for event in events))
        async with _limit(self.timeout):
            await self._writer.drain()
        while True:
            event = await self.next_event()
            if isinstance(event, h11.Response):
                headers: dict[str, str] = {}
                for name, value in event.headers:
                    key = name.decode("latin-1")
                    text = value.decode("latin-1")
                    headers[key] = f"{headers[key]}, {text}" if key in headers else text
                return Response(self, event.status_code, headers)
            if not isinstance(event, h11.InformationalResponse):  # 100 Continue and such
                raise RemoteProtocolError(f"unexpected {type(event).__name__} before a response")

    async def next_event(self) -> Any:
        h11 = self.h11
        while True:
            try:
                event = self._state.next_event()
            except h11.RemoteProtocolError as error:
                raise RemoteProtocolError(str(error)) from error
            if event is not h11.NEED_DATA:
                if isinstance(event, h11.ConnectionClosed):
                    raise RemoteProtocolError("the server closed the connection without a response")
                return event
            async with _limit(self.timeout):
                data = await self._reader.read(READ_SIZE)
            if data:
                self.answered = True
            self._state.receive_data(data)  # b"": the server closed its end

    def finished(self) -> None:
        """The response was read to its end: kept for the next request if both
        ends may go on."""
        self._finished = True
        h11 = self.h11
        if self._state.our_state is h11.DONE and self._state.their_state is h11.DONE:
            self._state.start_next_cycle()
            self._client._keep(self)
        else:
            self.close()

    def close_unless_finished(self) -> None:
        if not self._finished:
            self.close()

    def close(self) -> None:
        self._writer.close()


def _limit(timeout: float | None) -> Any:
    return asyncio.timeout(timeout) if timeout is not None else nullcontext()
