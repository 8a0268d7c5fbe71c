"""Sharing the event loop with whatever else runs on it while a stream is read.

A stream whose bytes are already buffered never suspends: the SDK parses
chunk after chunk without giving the loop a turn, so anything else on the
loop (a UI) gets nothing until the reply is over. A :class:`LoopShare` hands
the loop back whenever the reader has held it for a slice, then awaits the
request's :data:`~core.settings.Pace`: a front end's policy for when reading
may go on (the app's lets keys and renders pass first,
``tui.internals.keys_first``). The default waits for nothing: print mode has
no UI on the loop.
"""

from __future__ import annotations

import asyncio
import time

from core.settings import Pace, no_pace

SLICE_SECONDS = 0.005
"""How long a stream may hold the loop: well inside a frame."""


class LoopShare:
    def __init__(self, pace: Pace = no_pace, slice_seconds: float | None = None) -> None:
        self.pace = pace
        self.slice_seconds = SLICE_SECONDS if slice_seconds is None else slice_seconds
        self._since = time.perf_counter()

    async def tick(self) -> None:
        """Give the loop a turn if this reader has held it for a slice, then
        wait as long as the pace says."""
        if time.perf_counter() - self._since >= self.slice_seconds:
            await asyncio.sleep(0)
            # After the turn given: what the UI read meanwhile is what the pace waits for.
            await self.pace()
            self._since = time.perf_counter()
