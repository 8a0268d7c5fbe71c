"""The app's syncs with the config's ``[sync] folder``: at launch, after each
saved reply and at quit when ``auto`` is on, and whenever ``/sync`` asks.

Each runs in a thread of its own on its own database connection, as
``tangents sync`` does (:func:`tui.modes.sync_once.sync_once`), so no key ever
waits for a folder. What the screen shows of them is :meth:`AppSync.status`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from core.settings import SyncSettings
from core.sync.auto import AutoSync, SyncOutcome
from core.sync.background import in_thread
from core.sync.device import device_id
from core.sync.engine import SyncReport
from tui.modes.sync_once import SyncFailed, passphrase_from, sync_once


class AppSync:
    def __init__(
        self, settings: SyncSettings, db_path: Path, on_change: Callable[[], None]
    ) -> None:
        """``settings.folder`` must be set; ``on_change`` is called when a sync starts or ends."""
        assert settings.folder is not None
        self.settings = settings
        self.db_path = db_path
        self.folder = Path(settings.folder).expanduser()
        self.syncs = AutoSync(self._run, on_change)

    def _run(self) -> Awaitable[SyncReport]:
        return in_thread(self._sync)

    async def _sync(self) -> SyncReport:
        if not self.folder.is_dir():
            raise SyncFailed(f"{self.folder}: not a directory")
        passphrase = passphrase_from(self.settings.key_env)
        return await sync_once(self.db_path, self.folder.resolve(), device_id(), passphrase)

    def soon(self) -> None:
        """A sync in the background, when ``auto`` is on."""
        if self.settings.auto:
            self.syncs.request()

    async def now(self) -> SyncOutcome:
        """One sync that starts from now (``/sync``), waited for."""
        return await self.syncs.request()

    async def at_quit(self) -> str | None:
        """The last sync before the app ends (``auto``), waited for at most
        ``quit_wait`` seconds: a line to print when it was cut short."""
        if not self.settings.auto or await self.syncs.finish(self.settings.quit_wait):
            return None
        return (
            f"The sync at quit was cut short after {self.settings.quit_wait:g} s; "
            "the next sync sends the rest."
        )

    def status(self) -> str:
        return self.syncs.status(time.time())
