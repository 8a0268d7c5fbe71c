"""Response bodies read with a size limit, counted after decompression.

An error body or a window probe's answer is read whole by the clients (httpx's
``aread``), and a server that never ends one, or sends a small gzip that
expands to gigabytes, would fill the memory. What is read here stops at its
limit: an error body keeps its head (the message is at the start), a probe
answer that is too long is no answer. Streams are bounded by their line size
(:mod:`core.providers.sse`) and by time (:mod:`core.providers.limits`).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

ERROR_BODY_LIMIT = 64 * 1024
PROBE_BODY_LIMIT = 4 * 1024 * 1024
_GZIP_OR_ZLIB = 47
"""zlib's window bits that take a gzip or a zlib header alike."""


async def read_head(response: Any, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the decoded body, and whether there was more.

    ``response`` is an httpx response in
    a ``stream`` block; httpx decodes a chunk as it reads it, so no more than
    one chunk's expansion is held past the limit.
    """
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(parts)[:limit], True
    return b"".join(parts), False


def error_body_hook(httpx: Any) -> Callable[[Any], Awaitable[None]]:
    """An httpx ``response`` event hook (``httpx`` is the module the client
    is from: httpx, or httpx2 for the anthropic SDK) that makes an error
    response's body (status 400 and up) at most :data:`ERROR_BODY_LIMIT`
    bytes, decompressed here: for a client whose owner reads error bodies
    whole (the SDK). Its encoding header goes, so httpx decodes nothing more."""

    class CappedBody(httpx.AsyncByteStream):
        def __init__(self, raw: Any, encoding: str) -> None:
            self._raw = raw
            self._encoding = encoding

        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield await _capped(self._raw, self._encoding)

        async def aclose(self) -> None:
            await self._raw.aclose()

    async def cap(response: Any) -> None:
        if response.status_code >= 400:
            encoding = response.headers.pop("content-encoding", "")
            response.headers.pop("content-length", None)
            response.stream = CappedBody(response.stream, encoding)

    return cap


async def _capped(stream: Any, encoding: str) -> bytes:
    """The head of a raw body, decoded (gzip or deflate) within
    :data:`ERROR_BODY_LIMIT`; an encoding it cannot decode: nothing."""
    raw = bytearray()
    async for chunk in stream:
        raw += chunk
        if len(raw) > ERROR_BODY_LIMIT:
            break
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return bytes(raw[:ERROR_BODY_LIMIT])
    if encoding not in ("gzip", "deflate"):
        return b""
    for bits in (_GZIP_OR_ZLIB, -zlib.MAX_WBITS):  # deflate is sometimes sent headerless
        try:
            return zlib.decompressobj(bits).decompress(bytes(raw), ERROR_BODY_LIMIT)
        except zlib.error:
            continue
    return b""
