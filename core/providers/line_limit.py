"""Bodies that are not errors, bounded by the length of a line and of an event.

The readers above the HTTP client keep a line whole until it ends: httpx's
``aiter_lines`` (litellm's Gemini and Ollama routes), the ``openai`` SDK's
event decoder (which keeps a whole event, every line until a blank one), our
own :mod:`core.providers.sse`. None of them takes a limit, so a server that
sends one line without end, or a small gzip that expands to a gigabyte of
spaces, would fill the memory. :func:`line_limit_hook` is an httpx
``response`` event hook (on every response the client receives, redirects
and proxied ones included) that hands the reader the body decoded here, a
piece at a time, and ends it with a ``bad_response`` error once a line, or
an event of a server-sent event stream, passes :data:`core.providers.sse.MAX_LINE`.
Error bodies are bounded whole by :func:`core.providers.bodies.error_body_hook`.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from core.providers.base import ProviderError
from core.providers.sse import MAX_LINE, PIECE, TOO_LONG

_LINE_ENDS = (b"\n", b"\r")
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r")
"""Where a blank line ends (``\\r\\n\\r\\n`` holds ``\\n\\r``): the end of an event."""
_RECORD_PER_LINE = ("ndjson", "jsonl")
"""Content types of JSON lines (Ollama's streams): a record is a line, never
an event, since no blank line ever comes."""
UNREADABLE = "the server's compressed body could not be decompressed"
MAX_EVENT_LINE_ENDS = 2000
"""Line ends in one event (a thousand lines ended with ``\\r\\n``): the
``openai`` SDK copies an event's whole text again for each of its lines, so
an event of many short lines costs time in the square of its size long
before it is large. A server's event has a few lines."""
TOO_MANY_LINES = (
    "an event of the stream has more than a thousand lines; the rest of the reply was refused"
)


def line_limit_hook(httpx: Any) -> Callable[[Any], Awaitable[None]]:
    """An httpx ``response`` event hook (``httpx`` is the module the client
    is from) for responses below status 400: their body decoded here
    (gzip or deflate; its encoding header goes, so httpx decodes nothing
    more) and refused once a line or an event is longer than
    :data:`~core.providers.sse.MAX_LINE` bytes."""

    class Bounded(httpx.AsyncByteStream):
        def __init__(self, raw: Any, encodings: list[str], per_line: bool) -> None:
            self._raw = raw
            self._encodings = encodings
            self._per_line = per_line

        async def __aiter__(self) -> AsyncIterator[bytes]:
            decoders = [_Inflater(name) for name in reversed(self._encodings)]
            counters: list[_Counter | _EventLines] = [_Counter(_LINE_ENDS)]
            if not self._per_line:
                counters += [_Counter(_EVENT_ENDS), _EventLines()]
            async for chunk in self._raw:
                for piece in _decoded(decoders, chunk):
                    for counter in counters:
                        counter.add(piece)
                    yield piece

        async def aclose(self) -> None:
            await self._raw.aclose()

    async def bound(response: Any) -> None:
        if response.status_code >= 400:
            return
        encodings = _encodings(response.headers.get("content-encoding", ""))
        if encodings:
            del response.headers["content-encoding"]
            response.headers.pop("content-length", None)
        content_type = response.headers.get("content-type", "").lower()
        per_line = any(kind in content_type for kind in _RECORD_PER_LINE)
        response.stream = Bounded(response.stream, encodings, per_line)

    return bound


def _encodings(header: str) -> list[str]:
    """The encodings decoded here, in the order they were applied; httpx
    skips the ones it does not know, and so does this."""
    names = [name.strip().lower() for name in header.split(",")]
    return [name for name in names if name in ("gzip", "deflate")]


def _decoded(decoders: list[_Inflater], chunk: bytes) -> Iterator[bytes]:
    """``chunk`` through each decoder in turn, in pieces of at most
    :data:`~core.providers.sse.PIECE` bytes."""
    pieces: Iterator[bytes] = iter((chunk,))
    for decoder in decoders:
        pieces = decoder.pieces(pieces)
    return pieces


class _Inflater:
    """gzip or deflate (zlib-wrapped, or raw as some servers send it), whose
    output comes a bounded piece at a time however much one input expands."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding == "gzip"
        self._inflate = zlib.decompressobj(47 if self._gzip else zlib.MAX_WBITS)
        self._started = False

    def pieces(self, chunks: Iterator[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            yield from self._piecewise(chunk)

    def _piecewise(self, data: bytes) -> Iterator[bytes]:
        try:
            piece = self._inflate.decompress(data, PIECE)
        except zlib.error:
            if self._gzip or self._started:
                raise ProviderError("bad_response", UNREADABLE) from None
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)  # headerless deflate
            piece = self._decompress(data)
        self._started = True
        while piece:
            yield piece
            piece = self._decompress(self._inflate.unconsumed_tail)

    def _decompress(self, data: bytes) -> bytes:
        try:
            return self._inflate.decompress(data, PIECE)
        except zlib.error:
            raise ProviderError("bad_response", UNREADABLE) from None


class _Counter:
    """The length of the record being read (bytes since the last of
    ``ends``), refused past :data:`~core.providers.sse.MAX_LINE`."""

    def __init__(self, ends: tuple[bytes, ...]) -> None:
        self._ends = ends
        self._size = 0
        self._last = b""

    def add(self, piece: bytes) -> None:
        window = self._last + piece  # an end may begin in the piece before
        found = [at + len(end) for end in self._ends if (at := window.rfind(end)) >= 0]
        self._size = len(window) - max(found) if found else self._size + len(piece)
        self._last = piece[-1:]
        if self._size > MAX_LINE:
            raise ProviderError("bad_response", TOO_LONG)


class _EventLines:
    """The line ends of the event being read, refused past
    :data:`MAX_EVENT_LINE_ENDS`."""

    def __init__(self) -> None:
        self._ends = 0
        self._last = b""

    def add(self, piece: bytes) -> None:
        window = self._last + piece
        at = max(window.rfind(end) for end in _EVENT_ENDS)
        after = window[at + 2 :] if at >= 0 else piece
        self._ends = (0 if at >= 0 else self._ends) + after.count(b"\n") + after.count(b"\r")
        self._last = piece[-1:]
        if self._ends > MAX_EVENT_LINE_ENDS:
            raise ProviderError("bad_response", TOO_MANY_LINES)
