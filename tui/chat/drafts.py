"""What the user typed and has not sent, kept per session in the database.

The input's text is saved a moment after typing stops (off the UI thread:
the store writes in its own thread), when the chat screen goes (ctrl+n,
another session, quitting) and is read back when the session is shown
again. A session not saved yet (nothing sent) keeps its draft under ''
until it is; the next new session finds it there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from core.sessions.session import Session

SAVE_AFTER = 0.5
"""Seconds of no typing before the draft is written."""


class DraftKeeper:
    def __init__(self, session: Callable[[], Session]) -> None:
        self._session = session
        self._saved: dict[str, str] = {}
        self._pending: asyncio.TimerHandle | None = None
        self._text = ""

    @property
    def key(self) -> str:
        session = self._session()
        return session.id if session.persisted else ""

    async def load(self) -> str:
        """The draft kept for the session shown."""
        text = await self._session().store.draft(self.key)
        self._saved[self.key] = text
        self._text = text
        return text

    def changed(self, text: str) -> None:
        """The input now holds ``text``: write it once typing stops."""
        self._text = text
        if self._pending is not None:
            self._pending.cancel()
        loop = asyncio.get_running_loop()
        self._pending = loop.call_later(SAVE_AFTER, lambda: asyncio.ensure_future(self.flush()))

    async def flush(self) -> None:
        """Write the draft now, if it changed since it was last written. A
        session saved since its draft was kept under '' takes it over."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        store = self._session().store
        key, text = self.key, self._text
        if key and self._saved.get(""):
            await store.save_draft("", "")
            self._saved[""] = ""
        if self._saved.get(key, "") != text:
            await store.save_draft(key, text)
            self._saved[key] = text

    @property
    def text(self) -> str:
        return self._text
