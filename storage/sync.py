"""Reads and writes for folder sync (see ``core.sync``): each one statement
group run in aiosqlite's worker thread; :func:`apply` runs inside one write
transaction, so a sync killed half-way leaves the database as it was."""

from __future__ import annotations

import sqlite3
from itertools import groupby

from core.sync.batch import LocalSession, LocalSnapshot, SyncBatch
from storage.rows import SESSION_COLUMNS, session_from_row
from storage.writes import (
    check_leaf,
    delete_session,
    index_title,
    insert_entries,
    insert_session,
    put_blob,
    set_label,
)


def snapshot(conn: sqlite3.Connection) -> LocalSnapshot:
    ids: dict[str, set[str]] = {}
    for session_id, entry_id in conn.execute("SELECT session_id, id FROM entries"):
        ids.setdefault(session_id, set()).add(entry_id)
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
    base = dict(conn.execute("SELECT key, value FROM sync_base").fetchall())
    return LocalSnapshot(sessions, base)


def apply(conn: sqlite3.Connection, batch: SyncBatch) -> None:
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
    for (session_id, entry_id), label in batch.labels.items():
        set_label(conn, session_id, entry_id, label)
    for session_id in batch.deleted:
        delete_session(conn, session_id)
    conn.execute("DELETE FROM sync_base")
    conn.executemany("INSERT INTO sync_base (key, value) VALUES (?, ?)", batch.base.items())
