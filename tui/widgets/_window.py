"""The chat view's window arithmetic: which rows to mount, drop and hold on to.

Pure functions over row numbers and vertical spans (``(y, bottom)`` in the
view's content, bottom exclusive), so they are tested without Textual. A
window is the range ``lo`` to ``hi - 1`` of a path's rows.
"""

from __future__ import annotations

from collections.abc import Sequence

Span = tuple[int, int]
"""A row's ``(y, bottom)`` in the scrollable content; bottom exclusive."""


def end_window(total: int, size: int) -> tuple[int, int]:
    """The last ``size`` rows of ``total``."""
    return max(0, total - size), total


def start_window(total: int, size: int) -> tuple[int, int]:
    """The first ``size`` rows of ``total``."""
    return 0, min(total, size)


def window_at(index: int, total: int, size: int, before: int = 2) -> tuple[int, int]:
    """``size`` rows showing row ``index`` with ``before`` rows above it (fewer at the start)."""
    lo = max(0, index - before)
    return lo, min(total, lo + size)


def kept_rows(lo: int, hi: int, mounted: tuple[int, int], shared: int) -> tuple[int, int] | None:
    """Of the rows ``mounted`` now, those the new window ``lo``-``hi`` keeps: in
    both windows and below ``shared`` (rows that show the same in the new
    path). None when no row can stay."""
    kept_lo, kept_hi = max(lo, mounted[0]), min(hi, mounted[1], shared)
    return (kept_lo, kept_hi) if kept_lo < kept_hi else None


def far_above(spans: Sequence[Span | None], excess: int, top: float) -> int:
    """How many of the first ``excess`` rows end above ``top`` (counted from the
    first; a row not laid out yet stops the count)."""
    count = 0
    for span in spans[:excess]:
        if span is None or span[1] >= top:
            break
        count += 1
    return count


def far_below(spans: Sequence[Span | None], excess: int, bottom: float) -> int:
    """How many of the last ``excess`` rows start below ``bottom`` (counted from
    the last; a row not laid out yet stops the count)."""
    count = 0
    for span in reversed(spans[len(spans) - excess :] if excess > 0 else []):
        if span is None or span[0] <= bottom:
            break
        count += 1
    return count


def anchor_row(spans: Sequence[Span], top: int, bottom: int) -> int | None:
    """The row to hold in place while rows above it change, for a viewport from
    ``top`` to ``bottom``: the first row that starts in view, or else the one the
    view starts inside; None when no row is in view. ``spans`` are top to bottom."""
    chosen: int | None = None
    for index, (y, end) in enumerate(spans):
        if end <= top:
            continue
        if y >= bottom:
            break
        chosen = index
        if y >= top:
            break
        if end >= bottom:  # the view starts inside a row taller than it
            break
    return chosen
