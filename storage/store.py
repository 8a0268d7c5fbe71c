"""``SqliteStore``: core's :class:`~core.sessions.persistence.SessionStore` on one SQLite file.

Every method is one function run in aiosqlite's worker thread
(``Connection._execute``, pinned by the exact aiosqlite version): writes are
one ``BEGIN IMMEDIATE`` ... ``COMMIT`` there, so cancelling the awaiting task
never leaves a transaction open or half an append saved, and each call costs
one thread hand-off.

Lookups of a missing session raise ``KeyError`` on writes (``None`` or empty
on reads); an entry that does not fit the session's tree raises
``ValueError``; importing a session whose id (or an entry id) is already
there raises :class:`~core.sessions.persistence.ConflictError`; a problem with the file
itself raises :class:`StorageError`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from core.sessions.entries import Entry
from core.sessions.messages import Usage
from core.sessions.persistence import (
    Blob,
    LearnedWindow,
    SearchHit,
    SessionInfo,
    SessionMatch,
    SessionSummary,
)
from core.sync.batch import LocalSnapshot, RecentChanges, SyncBatch
from core.sync.cursor import SyncCursor
from core.values import BadValue
from storage import partials, reads, sync, writes
from storage.db import open_database, write
from storage.errors import StorageError

T = TypeVar("T")


class SqliteStore:
    def __init__(self, conn: aiosqlite.Connection, path: Path) -> None:
        """Use :meth:`open`."""
        self._conn = conn
        self.db_path = path
        """The database file."""

    @classmethod
    async def open(cls, path: str | os.PathLike[str]) -> SqliteStore:
        """Open or create the database, migrating it to this version's schema."""
        path = Path(path)
        return cls(await open_database(path), path)

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await self._conn._execute(fn, self._conn._conn, *args)
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise
        except sqlite3.DatabaseError as exc:
            raise StorageError.from_sqlite(self.db_path, exc) from exc
        except BadValue as exc:  # content damaged inside a sound file
            raise StorageError(self.db_path, str(exc)) from exc

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        return await self._run(write, fn, *args)

    async def close(self) -> None:
        await self._conn.close()

    # Sessions

    async def create_session(self, info: SessionInfo, entries: Sequence[Entry] = ()) -> None:
        await self._write(writes.insert_session, info, tuple(entries))

    async def import_session(
        self,
        info: SessionInfo,
        entries: Sequence[Entry],
        labels: Mapping[str, str] | None = None,
        blobs: Sequence[Blob] = (),
    ) -> None:
        await self._write(
            writes.import_session, info, tuple(entries), dict(labels or {}), tuple(blobs)
        )

    async def get_session(self, session_id: str) -> SessionInfo | None:
        return await self._run(reads.get_session, session_id)

    async def ids_matching(self, table: str, text: str, limit: int = 6) -> list[str]:
        """Session (``table="sessions"``) or entry ids starting with ``text``, or
        ending with it (a short id)."""
        return await self._run(reads.ids_matching, table, text, limit)

    async def latest_session(self) -> SessionInfo | None:
        return await self._run(reads.latest_session)

    async def list_sessions(
        self, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[SessionSummary]:
        return await self._run(reads.list_sessions, limit, offset, include_archived)

    async def get_summary(self, session_id: str) -> SessionSummary | None:
        return await self._run(reads.get_summary, session_id)

    async def append(
        self,
        session_id: str,
        entries: Sequence[Entry],
        leaf_id: str | None,
        title: str | None = None,
    ) -> None:
        await self._write(writes.append, session_id, tuple(entries), leaf_id, title)

    async def set_leaf(self, session_id: str, leaf_id: str | None) -> None:
        await self._write(writes.set_leaf, session_id, leaf_id)

    async def set_title(self, session_id: str, title: str, by_user: bool = True) -> None:
        await self._write(writes.set_title, session_id, title, by_user)

    async def set_archived(self, session_id: str, archived: bool) -> None:
        await self._write(writes.set_archived, session_id, archived)

    async def set_status(self, session_id: str, status: str) -> None:
        await self._write(writes.set_status, session_id, status)

    async def delete_session(self, session_id: str) -> None:
        await self._write(writes.delete_session, session_id)

    # Entries

    async def get_entry(self, entry_id: str) -> Entry | None:
        return await self._run(reads.get_entry, entry_id)

    async def path(self, leaf_id: str) -> list[Entry]:
        return await self._run(reads.path, leaf_id)

    async def entries(self, session_id: str) -> list[Entry]:
        return await self._run(reads.entries, session_id)

    async def children(self, entry_id: str | None, session_id: str) -> list[Entry]:
        return await self._run(reads.children, entry_id, session_id)

    async def save_partial(self, entry: Entry) -> None:
        await self._write(partials.save, entry, os.getpid())

    async def recover_partials(self, session_id: str) -> list[Entry]:
        if not await self._run(partials.any_for, session_id):
            return []
        return await self._write(partials.recover, session_id, partials.process_alive)

    async def set_label(self, session_id: str, entry_id: str, label: str | None) -> None:
        await self._write(writes.set_label, session_id, entry_id, label)

    async def labels(self, session_id: str) -> dict[str, str]:
        return await self._run(reads.labels, session_id)

    # Blobs and search

    async def put_blob(self, blob: Blob) -> None:
        await self._write(writes.put_blob, blob)

    async def get_blob(self, sha256: str) -> Blob | None:
        return await self._run(reads.get_blob, sha256)

    async def search(self, query: str, limit: int = 50) -> list[SearchHit]:
        return await self._run(reads.search, query, limit)

    # Totals

    async def session_usage(self, session_id: str) -> Usage:
        return await self._run(reads.session_usage, session_id)

    async def search_sessions(
        self, query: str, limit: int = 100, include_archived: bool = False
    ) -> list[SessionMatch]:
        return await self._run(reads.search_sessions, query, limit, include_archived)

    # Folder sync

    async def sync_snapshot(self) -> LocalSnapshot:
        return await self._run(sync.snapshot)

    async def sync_cursor(self, folder: str) -> SyncCursor | None:
        return await self._run(sync.cursor, folder)

    async def sync_recent(self, entry_mark: int) -> RecentChanges:
        return await self._run(sync.recent, entry_mark)

    async def sync_held(
        self, session_ids: Collection[str], entry_ids: Collection[str]
    ) -> dict[str, list[Entry]]:
        return await self._run(sync.held, sorted(session_ids), sorted(entry_ids))

    async def apply_sync(self, batch: SyncBatch) -> None:
        await self._write(sync.apply, batch)

    # What endpoints said about their models

    async def learned_window(self, endpoint: str, model: str) -> LearnedWindow | None:
        return await self._run(reads.learned_window, endpoint, model)

    async def save_learned_window(self, learned: LearnedWindow) -> None:
        await self._write(writes.save_learned_window, learned)

    async def draft(self, session_key: str) -> str:
        return await self._run(reads.draft, session_key)

    async def save_draft(self, session_key: str, text: str) -> None:
        await self._write(writes.save_draft, session_key, text)
