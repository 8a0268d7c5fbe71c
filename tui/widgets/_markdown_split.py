"""Where a streamed Markdown reply can be cut into independent segments.

A long reply is shown as a column of Markdown widgets, one per segment of
about :data:`SEGMENT_CHARS` characters, so each streamed append only re-lays
out a small widget. A cut is only made where the two halves render exactly as
the whole would: on a blank line, outside any code fence, before a line that
starts a plain paragraph (paragraphs have no top margin, so the spacing
between the segments is the previous block's bottom margin, as before) and
not before a setext heading underline.

Pure Python (no Textual), so it can be tested on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SEGMENT_CHARS = 4_000
"""A segment is cut at the first safe place after this many characters."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_ITEM = re.compile(r"^(\d{1,9}[.)])([ \t]|$)")
_NOT_PARAGRAPH_START = frozenset("#>|<`~=_[-*+:")


def starts_paragraph(line: str) -> bool:
    """Does this line (after a blank line, outside a fence) start a plain paragraph?"""
    if not line or line[0] in " \t" or line[0] in _NOT_PARAGRAPH_START:
        return False
    if not line.strip():
        return False
    return _LIST_ITEM.match(line) is None


@dataclass(frozen=True)
class Cut:
    """The current segment ends: show exactly ``finished`` in it, and start the
    next segment with ``carried`` (text already handed out that now belongs there)."""

    finished: str
    carried: str = ""


class MarkdownSplitter:
    """Cuts a stream of Markdown text into segments.

    Feed it text as it arrives; it returns what to do with it: strings to append
    to the current segment, and :class:`Cut` where a segment ends.
    """

    def __init__(self, segment_chars: int = SEGMENT_CHARS) -> None:
        self.segment_chars = segment_chars
        self._segment = ""
        """The text of the current (unfinished) segment."""
        self._written = 0
        """How much of ``_segment`` has been handed out."""
        self._scan = 0
        """Offset in ``_segment`` of the first line not yet scanned."""
        self._fence: tuple[str, int] | None = None
        """Character and length of the open code fence, if any."""
        self._previous_blank = True
        self._has_content = False
        """Whether the segment has a non-blank line yet: a cut needs one before it."""
        self._candidate: int | None = None
        """Offset of a paragraph line that can start the next segment, if the line after it allows."""

    @property
    def segment(self) -> str:
        """The text of the current segment so far."""
        return self._segment

    def feed(self, text: str) -> list[str | Cut]:
        """Add ``text``; return the appends and cuts that display it."""
        operations: list[str | Cut] = []
        self._segment += text
        while (cut := self._find_cut()) is not None:
            segment, written = self._segment, self._written
            if cut >= written:
                if cut > written:
                    operations.append(segment[written:cut])
                operations.append(Cut(segment[:cut]))
                written = 0
            else:
                operations.append(Cut(segment[:cut], segment[cut:written]))
                written -= cut
            self._restart(segment[cut:])
            self._written = written
        if len(self._segment) > self._written:
            operations.append(self._segment[self._written :])
            self._written = len(self._segment)
        return operations

    def _restart(self, text: str) -> None:
        self._segment = text
        self._scan = 0
        self._fence = None
        self._previous_blank = True
        self._has_content = False
        self._candidate = None

    def _find_cut(self) -> int | None:
        """Scan complete lines from ``_scan``; return a cut offset or ``None``."""
        segment = self._segment
        while True:
            end = segment.find("\n", self._scan)
            if end == -1:
                return None
            start = self._scan
            line = segment[start:end]
            self._scan = end + 1
            if self._candidate is not None:
                candidate, self._candidate = self._candidate, None
                if not _SETEXT_UNDERLINE.match(line):
                    # Re-scan the candidate line as the first line of the next segment.
                    return candidate
            blank = not line.strip()
            if self._fence is not None:
                self._has_content = True
                match = _FENCE.match(line)
                if match is not None:
                    marker = match.group(1)
                    char, length = self._fence
                    if marker[0] == char and len(marker) >= length and not match.group(2).strip():
                        self._fence = None
                self._previous_blank = False
                continue
            match = _FENCE.match(line)
            if match is not None and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                self._fence = (match.group(1)[0], len(match.group(1)))
            elif (
                self._previous_blank
                and self._has_content  # never leave a segment of blank lines behind
                and start >= self.segment_chars
                and starts_paragraph(line)
            ):
                self._candidate = start
            self._previous_blank = blank
            self._has_content = self._has_content or not blank


def estimated_rows(text: str, width: int) -> int:
    """About how many rows ``text`` takes as Markdown ``width`` columns wide:
    each line wraps at the width, and a blank line is the margin between blocks."""
    width = max(1, width)
    return sum(max(1, -(-len(line) // width)) for line in text.split("\n"))


def split_markdown(text: str, segment_chars: int = SEGMENT_CHARS) -> list[str]:
    """``text`` cut into segments the way a stream of it would be."""
    splitter = MarkdownSplitter(segment_chars)
    segments: list[str] = []
    for operation in splitter.feed(text):
        if isinstance(operation, Cut):
            segments.append(operation.finished)
    segments.append(splitter.segment)
    return segments
