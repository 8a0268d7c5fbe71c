"""Sharing the event loop with the UI while a stream is read.

A stream whose bytes are already buffered never suspends: the SDK parses
chunk after chunk without giving the loop a turn, so a UI on the same loop
paints nothing and echoes no key until the reply is over. A :class:`LoopShare`
hands the loop back whenever the reader has held it for a slice.
"""

from __future__ import annotations

import asyncio
import time

SLICE_SECONDS = 0.005
"""How long a stream may hold the loop: well inside a frame."""


class LoopShare:
    def __init__(self, slice_seconds: float = SLICE_SECONDS) -> None:
        self.slice_seconds = slice_seconds
        self._since = time.perf_counter()

    async def tick(self) -> None:
        """Give the loop a turn if this reader has held it for a slice."""
        if time.perf_counter() - self._since >= self.slice_seconds:
            await asyncio.sleep(0)
            self._since = time.perf_counter()
