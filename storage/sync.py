"""Reads and writes for folder sync (see ``core.sync``): each one statement
group run in aiosqlite's worker thread; :func:`apply` runs inside one write
transaction, so a sync killed half-way leaves the database as it was."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from itertools import groupby

from core.sessions.entries import Entry
from core.sessions.ids import now_iso
from core.sync.batch import LocalSession, LocalSnapshot, RecentChanges, SyncBatch
from core.sync.cursor import SyncCursor
from storage.rows import ENTRY_COLUMNS, SESSION_COLUMNS, entries_from_rows, session_from_row
from storage.writes import (
    check_leaf,
    delete_session,
    index_title,
    insert_entries,
    insert_session,
    put_blob,
    set_label,
)

# The cursor of each folder (see core.sync.cursor) is kept in the sync base
# under "cursor <folder>", apart from the registers.
_CURSOR_PREFIX = "cursor "
_CURSOR_LIKE = "cursor %"


def snapshot(conn: sqlite3.Connection) -> LocalSnapshot:
    conn.execute("BEGIN")
    try:
        mark = _max_rowid(conn)
        ids: dict[str, set[str]] = {}
        for session_id, entry_id in conn.execute("SELECT session_id, id FROM entries"):
            ids.setdefault(session_id, set()).add(entry_id)
        sessions, base = _registers(conn, ids)
    finally:
        conn.execute("COMMIT")
    return LocalSnapshot(sessions, base, mark)


def recent(conn: sqlite3.Connection, entry_mark: int) -> RecentChanges:
    conn.execute("BEGIN")
    try:
        mark = _max_rowid(conn)
        mark_id = _id_at(conn, entry_mark)
        rows = conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM entries WHERE rowid > ? ORDER BY rowid", (entry_mark,)
        )
        entries = entries_from_rows(rows)
        sessions, base = _registers(conn, {})
    finally:
        conn.execute("COMMIT")
    return RecentChanges(sessions, base, entries, mark, mark_id)


def held(
    conn: sqlite3.Connection, session_ids: list[str], entry_ids: list[str]
) -> dict[str, list[Entry]]:
    """The entries of ``session_ids`` and of every session holding one of
    ``entry_ids``, by session, in the order they were written."""
    rows = conn.execute(
        f"SELECT {ENTRY_COLUMNS} FROM entries WHERE session_id IN ("
        "SELECT value FROM json_each(?) UNION "
        "SELECT session_id FROM entries WHERE id IN (SELECT value FROM json_each(?))"
        ") ORDER BY rowid",
        (json.dumps(session_ids), json.dumps(entry_ids)),
    )
    found: dict[str, list[Entry]] = {}
    for entry in entries_from_rows(rows):
        found.setdefault(entry.session_id, []).append(entry)
    return found


def _max_rowid(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(rowid), 0) FROM entries").fetchone()[0])


def _id_at(conn: sqlite3.Connection, rowid: int) -> str | None:
    row = conn.execute("SELECT id FROM entries WHERE rowid = ?", (rowid,)).fetchone()
    return None if row is None else str(row[0])


def _registers(
    conn: sqlite3.Connection, ids: dict[str, set[str]]
) -> tuple[dict[str, LocalSession], dict[str, str]]:
    labels: dict[str, dict[str, str]] = {}
    for session_id, entry_id, label in conn.execute(
        "SELECT session_id, entry_id, label FROM labels"
    ):
        labels.setdefault(session_id, {})[entry_id] = label
    sessions = {}
    for row in conn.execute(f"SELECT {SESSION_COLUMNS} FROM sessions"):
        info = session_from_row(row)
        sessions[info.id] = LocalSession(
            info, frozenset(ids.get(info.id, ())), labels.get(info.id, {})
        )
    base = dict(
        conn.execute(
            "SELECT key, value FROM sync_base WHERE key NOT LIKE ?", (_CURSOR_LIKE,)
        ).fetchall()
    )
    return sessions, base


def cursor(conn: sqlite3.Connection, folder: str) -> SyncCursor | None:
    row = conn.execute(
        "SELECT value FROM sync_base WHERE key = ?", (_CURSOR_PREFIX + folder,)
    ).fetchone()
    return None if row is None else SyncCursor.from_json(folder, row[0])


def apply(conn: sqlite3.Connection, batch: SyncBatch) -> None:
    unchanged = batch.cursor is not None and _max_rowid(conn) == batch.cursor.entry_mark
    for blob in batch.blobs:
        put_blob(conn, blob)
    for info in batch.new_sessions:
        insert_session(conn, info, ())
    for session_id, group in groupby(batch.entries, key=lambda entry: entry.session_id):
        entries = list(group)
        insert_entries(conn, session_id, entries)
        conn.execute(
            "UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ?",
            (max(entry.created_at for entry in entries), session_id),
        )
    for session_id, leaf_id in batch.leaves.items():
        conn.execute("UPDATE sessions SET leaf_id = ? WHERE id = ?", (leaf_id, session_id))
        check_leaf(conn, session_id, leaf_id)
    for session_id, (title, by_user) in batch.titles.items():
        conn.execute(
            "UPDATE sessions SET title = ?, title_set_by_user = ? WHERE id = ?",
            (title, by_user, session_id),
        )
        index_title(conn, session_id)
    for session_id, archived in batch.archived.items():
        conn.execute("UPDATE sessions SET archived = ? WHERE id = ?", (archived, session_id))
    for session_id, status in batch.statuses.items():
        conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session_id))
    for (session_id, entry_id), label in batch.labels.items():
        set_label(conn, session_id, entry_id, label)
    received_at = now_iso()
    conn.executemany(
        "UPDATE sessions SET synced_from = ?, synced_at = ? WHERE id = ?",
        [(device, received_at, session_id) for session_id, device in batch.arrivals.items()],
    )
    for session_id in batch.deleted:
        delete_session(conn, session_id)
    conn.execute("DELETE FROM sync_base")
    conn.executemany("INSERT INTO sync_base (key, value) VALUES (?, ?)", batch.base.items())
    if batch.cursor is not None:
        _save_cursor(conn, batch.cursor, unchanged)


def _save_cursor(conn: sqlite3.Connection, saved: SyncCursor, unchanged: bool) -> None:
    """Save what the sync read, if it settled everything and no entry was added
    here since its snapshot (one would lie below the new mark unsent). The
    base was just rewritten without it, so otherwise the folder has none."""
    if not (unchanged and saved.settled):
        return
    mark = _max_rowid(conn)
    value = replace(saved, entry_mark=mark, mark_id=_id_at(conn, mark)).to_json()
    conn.execute(
        "INSERT INTO sync_base (key, value) VALUES (?, ?)", (_CURSOR_PREFIX + saved.folder, value)
    )
