"""Sharing the event loop with the UI while a stream is read.

A stream whose bytes are already buffered never suspends: the SDK parses
chunk after chunk without giving the loop a turn, so a UI on the same loop
paints nothing and echoes no key until the reply is over. A :class:`LoopShare`
hands the loop back whenever the reader has held it for a slice.

Keys come first (:data:`input_first`): from the moment the UI reads a key
until the widget it went to has handled it, stream readers wait, so that the
key's few hops through the UI's queues do not each queue behind a slice of
stream parsing; until its echo is painted, renderers wait too, so that the
frame showing it is not one laying out a render's new text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

SLICE_SECONDS = 0.005
"""How long a stream may hold the loop: well inside a frame."""
HOLD_SECONDS = 0.1
"""The longest a key holds streams back: a key whose handling or paint is never
reported (it went to a widget that was removed) cannot stall a reply longer."""


class InputFirst:
    """Keys on their way to the screen, which streams and renderers let pass."""

    def __init__(self, hold_seconds: float = HOLD_SECONDS) -> None:
        self.hold_seconds = hold_seconds
        self._unhandled = 0
        self._unpainted = 0
        self._since = 0.0
        self._changed: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def held(self) -> bool:
        """Is a key read but not yet painted?"""
        return bool(self._unhandled or self._unpainted)

    def key_read(self) -> None:
        self._unhandled += 1
        self._unpainted += 1
        self._since = time.perf_counter()

    def key_handled(self) -> None:
        self._unhandled = max(0, self._unhandled - 1)
        self._wake()

    def key_painted(self) -> None:
        self._unpainted = max(0, self._unpainted - 1)
        self._wake()

    async def handled(self) -> None:
        """Until every key read has been handled (for stream readers)."""
        await self._until(lambda: not self._unhandled)

    async def painted(self) -> None:
        """Until every key read has been painted (for renderers)."""
        await self._until(lambda: not self._unhandled and not self._unpainted)

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    async def _until(self, done: Callable[[], bool]) -> None:
        loop = asyncio.get_running_loop()
        if self._changed is None or self._loop is not loop:
            self._changed, self._loop = asyncio.Event(), loop
        while not done():
            remaining = self._since + self.hold_seconds - time.perf_counter()
            if remaining <= 0:
                # Keys whose handling or paint was never reported are forgotten.
                self._unhandled = self._unpainted = 0
                return
            self._changed.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self._changed.wait()
            except TimeoutError:
                pass


input_first = InputFirst()
"""The one event loop's: the UI reports keys, stream readers and renderers wait."""


class LoopShare:
    def __init__(
        self, slice_seconds: float = SLICE_SECONDS, keys: InputFirst = input_first
    ) -> None:
        self.slice_seconds = slice_seconds
        self.keys = keys
        self._since = time.perf_counter()

    async def tick(self) -> None:
        """Give the loop a turn if this reader has held it for a slice (a longer
        one while a key is on its way to the widget it goes to)."""
        if time.perf_counter() - self._since >= self.slice_seconds:
            await self.keys.handled()
            await asyncio.sleep(0)
            self._since = time.perf_counter()
