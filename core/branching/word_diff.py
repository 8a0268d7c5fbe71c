"""Where replies differ, word by word: a pure function for the compare screen.

Texts are matched line by line first, then the lines that differ are split
into tokens (runs of word characters, runs of whitespace, single other
characters) and matched with :class:`difflib.SequenceMatcher`. Matching
lines first keeps long replies cheap: token matching is quadratic in the
worst case, so a changed stretch larger than :data:`WORD_LEVEL_LIMIT` token
pairs is matched with difflib's junk heuristic instead (coarser, fast).
Each text comes back as spans that cover it exactly, marked changed or not:
joining a text's span texts gives the text back.

With more than two texts, the first is the reference: every other text is
compared with it, and the reference marks what any of the others lacks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)
WORD_LEVEL_LIMIT = 400_000
"""Token pairs (tokens of one stretch x tokens of the other) matched exactly."""


@dataclass(frozen=True)
class Span:
    text: str
    changed: bool


def tokens(text: str) -> list[str]:
    """Words, whitespace runs and single punctuation characters, in order (joined: ``text``)."""
    return _TOKEN.findall(text)


def _lines(parts: list[str]) -> tuple[list[str], list[int]]:
    """Tokens grouped into lines (a line ends with a whitespace token holding a
    newline): each line's text and the index of its first token."""
    lines: list[str] = []
    starts: list[int] = []
    current: list[str] = []
    for index, part in enumerate(parts):
        if not current:
            starts.append(index)
        current.append(part)
        if "\n" in part:
            lines.append("".join(current))
            current = []
    if current:
        lines.append("".join(current))
    starts.append(len(parts))
    return lines, starts


def _unmatched(a: list[str], b: list[str]) -> tuple[set[int], set[int]]:
    """Indexes of the tokens of ``a`` and of ``b`` outside the longest common blocks.
    Whitespace is never marked: a changed word shows, not the space after it."""
    lines_a, starts_a = _lines(a)
    lines_b, starts_b = _lines(b)
    in_a: set[int] = set()
    in_b: set[int] = set()
    by_line = SequenceMatcher(None, lines_a, lines_b, autojunk=False)
    for tag, la0, la1, lb0, lb1 in by_line.get_opcodes():
        if tag == "equal":
            continue
        a0, a1, b0, b1 = starts_a[la0], starts_a[la1], starts_b[lb0], starts_b[lb1]
        coarse = (a1 - a0) * (b1 - b0) > WORD_LEVEL_LIMIT
        matcher = SequenceMatcher(None, a[a0:a1], b[b0:b1], autojunk=coarse)
        for word_tag, i0, i1, j0, j1 in matcher.get_opcodes():
            if word_tag != "equal":
                in_a.update(i for i in range(a0 + i0, a0 + i1) if not a[i].isspace())
                in_b.update(j for j in range(b0 + j0, b0 + j1) if not b[j].isspace())
    return in_a, in_b


def _spans(parts: list[str], changed: set[int]) -> list[Span]:
    """Consecutive tokens with the same mark merged into one span; whitespace
    between two changed tokens joins them."""
    spans: list[Span] = []
    for index, part in enumerate(parts):
        mark = index in changed
        if part.isspace() and spans and spans[-1].changed:
            mark = index + 1 in changed
        if spans and spans[-1].changed == mark:
            spans[-1] = Span(spans[-1].text + part, mark)
        else:
            spans.append(Span(part, mark))
    return spans


def word_diff(texts: Sequence[str]) -> list[list[Span]]:
    """Spans of every text, marked where it differs from the reference (the
    first text); the reference is marked where it differs from any other."""
    split = [tokens(t) for t in texts]
    if len(split) < 2:
        return [_spans(parts, set()) for parts in split]
    reference: set[int] = set()
    others: list[set[int]] = []
    for parts in split[1:]:
        in_ref, in_other = _unmatched(split[0], parts)
        reference |= in_ref
        others.append(in_other)
    return [_spans(split[0], reference)] + [
        _spans(parts, changed) for parts, changed in zip(split[1:], others, strict=True)
    ]
