"""The chat view's window arithmetic (tui/widgets/_window.py), without Textual."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tui.widgets._window import (
    anchor_row,
    end_window,
    far_above,
    far_below,
    kept_rows,
    start_window,
    window_at,
)


def stacked(*heights: int) -> list[tuple[int, int]]:
    """Rows of these heights, one under the other from y=0."""
    spans, y = [], 0
    for height in heights:
        spans.append((y, y + height))
        y += height
    return spans


def test_windows_at_the_ends_and_around_a_row() -> None:
    assert end_window(100, 12) == (88, 100)
    assert end_window(5, 12) == (0, 5)
    assert start_window(100, 12) == (0, 12)
    assert start_window(5, 12) == (0, 5)
    assert window_at(50, 100, 12) == (48, 60)
    assert window_at(1, 100, 12) == (0, 12)
    assert window_at(99, 100, 12) == (97, 100)


def test_rows_kept_are_mounted_in_both_windows_and_show_the_same() -> None:
    assert kept_rows(10, 30, (0, 20), shared=100) == (10, 20)
    assert kept_rows(10, 30, (0, 20), shared=15) == (10, 15)
    assert kept_rows(10, 30, (0, 20), shared=5) is None  # the paths differ above the window
    assert kept_rows(25, 30, (0, 20), shared=100) is None  # no overlap


@given(
    st.integers(0, 50),
    st.integers(0, 50),
    st.integers(0, 50),
    st.integers(0, 50),
    st.integers(0, 60),
)
def test_kept_rows_are_in_both_windows_and_below_shared(a, b, c, d, shared) -> None:
    lo, hi = min(a, b), max(a, b)
    mounted = (min(c, d), max(c, d))
    kept = kept_rows(lo, hi, mounted, shared)
    if kept is None:
        assert not any(
            lo <= i < hi and mounted[0] <= i < mounted[1] and i < shared for i in range(60)
        )
    else:
        first, end = kept
        assert lo <= first < end <= hi and mounted[0] <= first and end <= mounted[1]
        assert end <= shared


def test_rows_far_above_the_view_are_counted_from_the_top() -> None:
    spans = stacked(10, 10, 10, 10)  # rows end at 10, 20, 30, 40
    assert far_above(spans, excess=4, top=25) == 2
    assert far_above(spans, excess=1, top=25) == 1  # never more than the excess
    assert far_above(spans, excess=4, top=5) == 0
    assert far_above([None, *spans], excess=4, top=25) == 0  # not laid out: keep it


def test_rows_far_below_the_view_are_counted_from_the_bottom() -> None:
    spans = stacked(10, 10, 10, 10)  # rows start at 0, 10, 20, 30
    assert far_below(spans, excess=4, bottom=15) == 2
    assert far_below(spans, excess=1, bottom=15) == 1
    assert far_below(spans, excess=4, bottom=35) == 0
    assert far_below([*spans, None], excess=4, bottom=15) == 0
    assert far_below(spans, excess=0, bottom=0) == 0


def test_the_anchor_is_the_first_row_starting_in_view() -> None:
    spans = stacked(10, 10, 10, 10)
    assert anchor_row(spans, top=5, bottom=25) == 1  # row 0 is cut at the top
    assert anchor_row(spans, top=10, bottom=25) == 1
    assert anchor_row(spans, top=0, bottom=25) == 0


def test_a_row_taller_than_the_view_is_the_anchor_when_the_view_is_inside_it() -> None:
    spans = stacked(10, 100, 10)
    assert anchor_row(spans, top=20, bottom=40) == 1


def test_no_anchor_when_nothing_is_in_view() -> None:
    assert anchor_row(stacked(10, 10), top=50, bottom=60) is None
    assert anchor_row([], top=0, bottom=10) is None


@given(st.lists(st.integers(1, 20), max_size=12), st.integers(0, 200), st.integers(1, 40))
def test_the_anchor_is_in_view(heights, top, height) -> None:
    spans = stacked(*heights)
    bottom = top + height
    index = anchor_row(spans, top, bottom)
    in_view = [i for i, (y, end) in enumerate(spans) if end > top and y < bottom]
    if not in_view:
        assert index is None
        return
    first = in_view[0]
    y, end = spans[first]
    # a row cut at the top is held only when it fills the view (or nothing follows)
    expected = first if y >= top or end >= bottom or len(in_view) == 1 else in_view[1]
    assert index == expected
