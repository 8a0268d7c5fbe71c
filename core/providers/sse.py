"""Server-sent events read from a streamed httpx (or httpx2) response, as
``(event, data)`` pairs: what the OpenAI and Anthropic readers share.

Parsed as the SDKs' decoders do (the WHATWG event-stream rules they follow):
lines end at ``\\r\\n``, ``\\n`` or ``\\r`` only (httpx's ``aiter_lines`` also
splits at U+2028, U+0085 and others, which JSON may carry unescaped); a field
is ``name: value`` (one space after the colon dropped); ``data:`` lines join
with newlines; a blank line ends an event. Comments, ``id:`` and ``retry:``
are skipped, and an event cut off before its blank line is not one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any


async def events(response: Any) -> AsyncIterator[tuple[str, str]]:
    """Each event's name (``""`` without an ``event:`` field) and data.

    An event with neither (a blank line after comments only) is none.
    """
    name = ""
    data: list[str] = []
    async for line in _lines(response):
        if line:
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
            continue
        if name or data:
            yield name, "\n".join(data)
        name, data = "", []


async def _lines(response: Any) -> AsyncIterator[str]:
    """The body's lines, without their ends, decoded as UTF-8."""
    pending = b""
    async for chunk in response.aiter_bytes():
        if not chunk:
            continue
        lines = (pending + chunk).splitlines(keepends=True)  # bytes: at \r\n, \n, \r only
        # the last line may go on in the next chunk (a \r may be half of a \r\n)
        pending = b"" if lines[-1].endswith(b"\n") else lines.pop()
        for line in lines:
            yield line.rstrip(b"\r\n").decode("utf-8", "replace")
    if pending:
        yield pending.rstrip(b"\r\n").decode("utf-8", "replace")
