"""A hybrid logical clock: stamps that order writes across machines whose
clocks disagree.

A stamp is wall milliseconds, a counter and the device id. A device's next
stamp is later than every stamp it has seen, whatever its own clock says, so
a change made after reading another machine's change always wins over it,
and two stamps are never equal (the device id breaks ties).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

_MS_DIGITS = 13
_COUNTER_DIGITS = 6


@dataclass(frozen=True, order=True)
class Stamp:
    ms: int
    counter: int
    device: str

    def __str__(self) -> str:
        return f"{self.ms:0{_MS_DIGITS}d}.{self.counter:0{_COUNTER_DIGITS}d}.{self.device}"

    @classmethod
    def parse(cls, text: str) -> Stamp:
        """A stamp from :meth:`__str__`; ``ValueError`` for anything else."""
        ms, counter, device = text.split(".", 2)
        if len(ms) != _MS_DIGITS or len(counter) != _COUNTER_DIGITS or not device:
            raise ValueError(f"not a clock stamp: {text!r}")
        return cls(int(ms), int(counter), device)


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Clock:
    """One device's clock: :meth:`observe` what was read, :meth:`tick` to write."""

    def __init__(self, device: str, now: Callable[[], int] = wall_ms) -> None:
        self._device = device
        self._now = now
        self._last = Stamp(0, 0, device)

    @property
    def device(self) -> str:
        return self._device

    @property
    def last(self) -> Stamp:
        """The latest stamp observed or made."""
        return self._last

    def observe(self, stamp: Stamp) -> None:
        if (stamp.ms, stamp.counter) > (self._last.ms, self._last.counter):
            self._last = Stamp(stamp.ms, stamp.counter, self._device)

    def tick(self) -> Stamp:
        now = self._now()
        if now > self._last.ms:
            self._last = Stamp(now, 0, self._device)
        else:
            self._last = Stamp(self._last.ms, self._last.counter + 1, self._device)
        return self._last
