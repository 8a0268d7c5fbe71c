"""Checkpoints of replies still streaming (table ``partial_replies``).

Entries are write-once, so a reply that is still arriving is not one: it is
saved here every few seconds, one row replaced in place, under the id its
entry will have. Saving that entry deletes the row in the same transaction
(:func:`storage.writes.insert_entries`). A row whose owner process is gone
(killed mid-reply) is recovered as that entry, incomplete as it stands, when
its session is next opened. Each function runs inside
:func:`storage.db.write` and takes the raw connection.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

from core.sessions.entries import Entry
from core.sessions.ids import now_iso
from storage.rows import ENTRY_COLUMNS, entry_from_row, entry_row
from storage.writes import insert_entries


def save(conn: sqlite3.Connection, entry: Entry, owner_pid: int) -> None:
    """Save or replace the checkpoint of the reply that will be ``entry``."""
    conn.execute(
        f"INSERT INTO partial_replies ({ENTRY_COLUMNS}, owner_pid, saved_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, saved_at = excluded.saved_at",
        (*entry_row(entry), owner_pid, now_iso()),
    )


def any_for(conn: sqlite3.Connection, session_id: str) -> bool:
    """Whether the session has a checkpoint (a read, before any write is needed)."""
    found = conn.execute(
        "SELECT 1 FROM partial_replies WHERE session_id = ? LIMIT 1", (session_id,)
    ).fetchone()
    return found is not None


def recover(conn: sqlite3.Connection, session_id: str, alive: Callable[[int], bool]) -> list[Entry]:
    """Turn the session's checkpoints whose owner is not ``alive`` into entries;
    the leaf follows one that continues it. Returns the entries made."""
    rows = conn.execute(
        f"SELECT {ENTRY_COLUMNS}, owner_pid FROM partial_replies WHERE session_id = ?",
        (session_id,),
    ).fetchall()
    recovered = []
    for row in rows:
        if alive(row[-1]):
            continue
        conn.execute("DELETE FROM partial_replies WHERE id = ?", (row[0],))
        parent_id = row[1]
        taken = conn.execute("SELECT 1 FROM entries WHERE id = ?", (row[0],)).fetchone()
        parent_there = (
            parent_id is None
            or conn.execute(
                "SELECT 1 FROM entries WHERE id = ? AND session_id = ?", (parent_id, session_id)
            ).fetchone()
        )
        if taken or not parent_there:
            continue
        entry = entry_from_row(row[:-1])
        insert_entries(conn, session_id, [entry])
        conn.execute(
            "UPDATE sessions SET leaf_id = ?, updated_at = ? WHERE id = ? AND leaf_id IS ?",
            (entry.id, now_iso(), session_id, parent_id),
        )
        recovered.append(entry)
    return recovered


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (it may be another
    program that reused the id: its checkpoint then waits until that ends)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
