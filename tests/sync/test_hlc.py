"""The hybrid logical clock orders writes across machines whose clocks disagree."""

from __future__ import annotations

import pytest

from core.sync.hlc import Clock, Stamp


def test_stamps_increase_when_the_wall_clock_goes_back() -> None:
    times = iter([5_000, 4_000, 4_000, 6_000])
    clock = Clock("a", now=lambda: next(times))
    stamps = [clock.tick() for _ in range(4)]
    assert stamps == sorted(stamps) and len(set(stamps)) == 4
    assert str(stamps) == str(sorted(stamps, key=str))  # the text form sorts the same way


def test_a_write_after_reading_a_fast_clock_wins_over_it() -> None:
    fast = Clock("fast", now=lambda: 10_000_000)
    seen = fast.tick()
    slow = Clock("slow", now=lambda: 1_000)
    slow.observe(seen)
    assert slow.tick() > seen


def test_two_devices_never_make_equal_stamps() -> None:
    assert Clock("a", now=lambda: 7).tick() != Clock("b", now=lambda: 7).tick()


def test_the_text_form_round_trips_and_refuses_other_text() -> None:
    stamp = Stamp(1_795_836_408_016, 12, "laptop-1a2b3c")
    assert Stamp.parse(str(stamp)) == stamp
    for bad in ("", "12.3.x", "1795836408016.000012.", "nonsense"):
        with pytest.raises(ValueError):
            Stamp.parse(bad)
