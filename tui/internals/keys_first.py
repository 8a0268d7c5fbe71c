"""Keys first: the app's policy for sharing the loop with replies streaming in.

The UI comes first (:data:`ui_first`). From the moment it reads a key until
the widget the key went to has handled it, and while it renders a reply's
first words, stream readers wait (the app gives providers
:meth:`UiFirst.reader_turn` as their pace, :mod:`core.providers.pacing`):
each of those takes several loop turns (a hop through a message queue, a
mount), and would otherwise queue behind a slice of stream parsing at every
one. Until a key's echo is painted, renderers wait too, so that the frame
showing it is not one laying out a render's new text; and until it is
handled, screen updates wait (:attr:`UiFirst.key_waiting`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

HOLD_SECONDS = 0.1
"""The longest the UI holds streams back after a key or a render began: a key
whose handling or paint is never reported (it went to a widget that was
removed) cannot stall a reply for longer."""


class UiFirst:
    """Keys on their way to the screen and renders under way, which stream
    readers (and, for keys, renderers) let pass."""

    def __init__(self, hold_seconds: float = HOLD_SECONDS) -> None:
        self.hold_seconds = hold_seconds
        self._unhandled = 0
        self._unpainted = 0
        self._renders = 0
        self._since = 0.0
        self._key_read_at = 0.0
        self._changed: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def held(self) -> bool:
        """Is a key read but not yet painted, or a render under way?"""
        return bool(self._unhandled or self._unpainted or self._renders)

    @property
    def key_waiting(self) -> bool:
        """Is a key read but not yet handled, within the hold's time limit since
        the last key read? Screen updates wait for it: its handler and echo come
        before a layout pass due for other widgets. (Renders do not extend the
        hold: a key whose handler awaits a screen update would wait for good.)"""
        return bool(self._unhandled) and time.perf_counter() - self._key_read_at < self.hold_seconds

    @property
    def key_unhandled(self) -> bool:
        """Is a key read but not yet handled (one of a burst still coming)?"""
        return bool(self._unhandled)

    def key_read(self) -> None:
        self._unhandled += 1
        self._unpainted += 1
        self._since = self._key_read_at = time.perf_counter()

    def key_handled(self) -> None:
        self._unhandled = max(0, self._unhandled - 1)
        self._wake()

    def key_painted(self) -> None:
        self._unpainted = max(0, self._unpainted - 1)
        self._wake()

    def forget_keys(self) -> None:
        """The UI that read keys is gone: none of them will be handled or painted."""
        self._unhandled = self._unpainted = 0
        self._wake()

    @contextmanager
    def rendering(self) -> Iterator[None]:
        """Around a render the reader must not slow (a reply's first words):
        readers wait until it is done."""
        self._renders += 1
        self._since = time.perf_counter()
        try:
            yield
        finally:
            self._renders = max(0, self._renders - 1)
            self._wake()

    async def reader_turn(self) -> None:
        """Until every key read has been handled and no render is under way."""
        await self._until(lambda: not self._unhandled and not self._renders)

    async def render_turn(self) -> None:
        """Until every key read has been painted."""
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
                # What was never reported is forgotten: the next turn does not wait again.
                self._unhandled = self._unpainted = self._renders = 0
                return
            self._changed.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self._changed.wait()
            except TimeoutError:
                pass


ui_first = UiFirst()
"""The app's: it reports keys and renders; stream readers (its conversations'
pace) and renderers wait."""
