"""Words (as ``str.split`` counts them) in slices of one long text.

Shortening a message tries many cuts of the same text; splitting its middle
each time costs as much as the whole text. Counting the words of the whole
text once and subtracting what lies outside the slice reads at most half of
it per cut.
"""

from __future__ import annotations


class WordCount:
    """Counts the words between two positions of ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._total: int | None = None

    def between(self, start: int, end: int) -> int:
        """``len(text[start:end].split())`` for ``0 <= start <= end <= len(text)``,
        reading the shorter of the slice and the rest of the text."""
        text = self.text
        if 2 * (end - start) <= len(text):
            return len(text[start:end].split())
        if self._total is None:
            self._total = len(text.split())
        words = self._total - len(text[:start].split()) - len(text[end:].split())
        # A word that crosses a cut is counted on both sides of it.
        if start > 0 and not text[start - 1].isspace() and not text[start].isspace():
            words += 1
        if end < len(text) and not text[end - 1].isspace() and not text[end].isspace():
            words += 1
        return words
