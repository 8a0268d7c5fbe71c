"""What a card says about an attached file beyond its size: an audio file's
duration (read from its headers by ``mutagen``) and a PDF's page count.

Both read bytes already in memory and within their kind's size limit. Neither
decodes audio or inflates a PDF's compressed streams, so a zip bomb inside a
PDF costs nothing here; a file they cannot read has no duration or page count,
which is not an error.
"""

from __future__ import annotations

import io
import math
import re

_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z0-9])")
"""A page object's dictionary entry (``/Type /Pages`` is the tree above the pages)."""


def audio_seconds(data: bytes) -> float | None:
    """The duration its headers give, or None when they give none."""
    import mutagen

    try:
        found = mutagen.File(io.BytesIO(data))
        length = found.info.length if found is not None else None
    # mutagen's parsers raise many kinds of errors on broken or hostile headers;
    # any of them means only that no duration is known.
    except Exception:
        return None
    if not isinstance(length, (int, float)) or not math.isfinite(length) or length <= 0:
        return None
    return float(length)


def pdf_pages(data: bytes) -> int | None:
    """The number of page objects written in the clear, or None when there are
    none to see (a PDF whose pages sit in compressed object streams)."""
    count = len(_PAGE.findall(data))
    return count or None


def duration_text(seconds: float) -> str:
    """``0:07``, ``3:25``, ``1:02:03`` (``?`` for a value no clock shows)."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
