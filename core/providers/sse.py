"""Server-sent events read from a streamed httpx (or httpx2) response, as
``(event, data)`` pairs: what the OpenAI and Anthropic readers share.

Parsed as the SDKs' decoders do (the WHATWG event-stream rules they follow):
lines end at ``\\r\\n``, ``\\n`` or ``\\r`` only (httpx's ``aiter_lines`` also
splits at U+2028, U+0085 and others, which JSON may carry unescaped); a field
is ``name: value`` (one space after the colon dropped); ``data:`` lines join
with newlines; a blank line ends an event. Comments, ``id:`` and ``retry:``
are skipped, and an event cut off before its blank line is not one.

A line, and an event's data, longer than :data:`MAX_LINE` bytes is refused
(a ``bad_response`` error) rather than kept growing: a server that sends one
line without end would otherwise fill the memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from core.providers.base import ProviderError

MAX_LINE = 16 * 1024 * 1024
PIECE = 65536
"""The most of a chunk split into lines at once."""
TOO_LONG = "a line of the stream is longer than 16 MB; the rest of the reply was refused"


async def events(response: Any) -> AsyncIterator[tuple[str, str]]:
    """Each event's name (``""`` without an ``event:`` field) and data.

    An event with neither (a blank line after comments only) is none.
    """
    name = ""
    data: list[str] = []
    size = 0
    async for line in _lines(response):
        if line:
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                size += len(value)
                if size > MAX_LINE:
                    raise ProviderError("bad_response", TOO_LONG)
                data.append(value)
            elif field == "event":
                name = value
            continue
        if name or data:
            yield name, "\n".join(data)
        name, data, size = "", [], 0


async def _lines(response: Any) -> AsyncIterator[str]:
    """The body's lines, without their ends, decoded as UTF-8."""
    pending = bytearray()
    async for chunk in response.aiter_bytes():
        # A decoded chunk can be large (a gzip expands up to a thousandfold): split
        # a piece at a time, so that a flood of empty lines is never one big list.
        for start in range(0, len(chunk), PIECE):
            piece = chunk[start : start + PIECE]
            going_on = not pending.endswith(b"\r")  # (else the piece's start ends that line)
            if going_on and b"\n" not in piece and b"\r" not in piece:  # kept, not re-split
                pending += piece
                if len(pending) > MAX_LINE:
                    raise ProviderError("bad_response", TOO_LONG)
                continue
            lines = (bytes(pending) + piece).splitlines(keepends=True)  # at \r\n, \n, \r only
            # the last line may go on in the next piece (a \r may be half of a \r\n)
            pending = bytearray() if lines[-1].endswith(b"\n") else bytearray(lines.pop())
            if len(pending) > MAX_LINE:
                raise ProviderError("bad_response", TOO_LONG)
            for line in lines:
                yield line.rstrip(b"\r\n").decode("utf-8", "replace")
    if pending:
        yield bytes(pending).rstrip(b"\r\n").decode("utf-8", "replace")
