"""Syncs asked for while the app runs: at most one running and one queued.

Every request made while a sync runs joins the one queued after it, so a burst
of saved replies costs two syncs at most, and each request's future tells when
a sync that began after it has ended (a sync that was running already may have
read the database before the request's changes).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.sync.engine import SyncReport


@dataclass(frozen=True)
class SyncOutcome:
    at: float
    """When it ended (``time.time()``)."""
    report: SyncReport | None = None
    error: str | None = None
    """One line: why it failed."""


class AutoSync:
    def __init__(
        self, run: Callable[[], Awaitable[SyncReport]], on_change: Callable[[], None]
    ) -> None:
        """``run`` does one sync; ``on_change`` is called when one starts or ends."""
        self._run = run
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self._queued: asyncio.Future[SyncOutcome] | None = None
        self.last: SyncOutcome | None = None
        """How the latest sync ended; None before the first has."""

    @property
    def running(self) -> bool:
        return self._task is not None

    def request(self) -> asyncio.Future[SyncOutcome]:
        """Start a sync, or queue one after the running one; its future."""
        if self._task is not None:
            if self._queued is None:
                self._queued = asyncio.get_running_loop().create_future()
            return self._queued
        future: asyncio.Future[SyncOutcome] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._syncs(future))
        self._on_change()
        return future

    async def finish(self, timeout: float) -> bool:
        """One more sync, waited for at most ``timeout`` seconds: False if it was cut short."""
        try:
            await asyncio.wait_for(asyncio.shield(self.request()), timeout)
        except TimeoutError:
            return False
        return True

    async def _syncs(self, future: asyncio.Future[SyncOutcome]) -> None:
        try:
            while True:
                self.last = await self._once()
                if not future.done():
                    future.set_result(self.last)
                if self._queued is None:
                    return
                future, self._queued = self._queued, None
                self._on_change()
        finally:
            self._task = None
            self._on_change()

    async def _once(self) -> SyncOutcome:
        try:
            report = await self._run()
        except Exception as error:
            return SyncOutcome(time.time(), error=one_line(error))
        return SyncOutcome(time.time(), report=report)

    def status(self, now: float) -> str:
        """``syncing…``, ``synced 3 min ago`` or ``sync failed: <why>``; ``""`` before any."""
        if self.running:
            return "syncing…"
        if self.last is None:
            return ""
        if self.last.error is not None:
            return f"sync failed: {self.last.error}"
        minutes = int(max(0.0, now - self.last.at) // 60)
        if minutes < 1:
            return "synced just now"
        return f"synced {minutes} min ago" if minutes < 60 else f"synced {minutes // 60} h ago"


def one_line(error: BaseException) -> str:
    """The error's first line, or its type when it says nothing."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
