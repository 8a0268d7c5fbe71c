"""Write operations. Each runs inside :func:`storage.db.write` (one
transaction, in aiosqlite's worker thread) and takes the raw connection."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence

from core.sessions.entries import Entry
from core.sessions.ids import now_iso
from core.sessions.persistence import Blob, ConflictError, LearnedWindow, SessionInfo
from storage.fts import searchable_text
from storage.rows import ENTRY_COLUMNS, entry_row

FIRST_MESSAGE_CHARS = 500
_ID_CHUNK = 500  # ids per IN (...) lookup, well under SQLite's variable limit


def insert_session(conn: sqlite3.Connection, info: SessionInfo, entries: Sequence[Entry]) -> None:
    conn.execute(
        "INSERT INTO sessions (id, title, title_set_by_user, created_at, updated_at, leaf_id,"
        " archived, parent_session_id, parent_entry_id, cwd, status)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            info.id,
            info.title,
            info.title_set_by_user,
            info.created_at,
            info.updated_at,
            info.leaf_id,
            info.archived,
            info.parent_session_id,
            info.parent_entry_id,
            info.cwd,
            info.status,
        ),
    )
    insert_entries(conn, info.id, entries)
    check_leaf(conn, info.id, info.leaf_id)
    index_title(conn, info.id)


def import_session(
    conn: sqlite3.Connection,
    info: SessionInfo,
    entries: Sequence[Entry],
    labels: Mapping[str, str],
    blobs: Sequence[Blob],
) -> None:
    """A whole session with its labels and blobs; refuses ids already present."""
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (info.id,)).fetchone():
        raise ConflictError(f"a session with id {info.id} already exists")
    ids = [entry.id for entry in entries]
    for start in range(0, len(ids), _ID_CHUNK):
        chunk = ids[start : start + _ID_CHUNK]
        found = conn.execute(
            f"SELECT id, session_id FROM entries WHERE id IN ({','.join('?' * len(chunk))}) LIMIT 1",
            chunk,
        ).fetchone()
        if found:
            raise ConflictError(f"entry {found[0]} already exists (in session {found[1]})")
    for blob in blobs:
        put_blob(conn, blob)
    insert_session(conn, info, entries)
    for entry_id, label in labels.items():
        set_label(conn, info.id, entry_id, label)


def append(
    conn: sqlite3.Connection,
    session_id: str,
    entries: Sequence[Entry],
    leaf_id: str | None,
    title: str | None,
) -> None:
    cursor = conn.execute(
        "UPDATE sessions SET updated_at = ?1, leaf_id = ?2,"
        " title = CASE WHEN title_set_by_user OR ?3 IS NULL THEN title ELSE ?3 END"
        " WHERE id = ?4",
        (now_iso(), leaf_id, title, session_id),
    )
    _require(cursor, session_id)
    insert_entries(conn, session_id, entries)
    check_leaf(conn, session_id, leaf_id)
    if title is not None:
        index_title(conn, session_id)


def set_leaf(conn: sqlite3.Connection, session_id: str, leaf_id: str | None) -> None:
    cursor = conn.execute(
        "UPDATE sessions SET leaf_id = ?, updated_at = ? WHERE id = ?",
        (leaf_id, now_iso(), session_id),
    )
    _require(cursor, session_id)
    check_leaf(conn, session_id, leaf_id)


def set_title(conn: sqlite3.Connection, session_id: str, title: str, by_user: bool) -> None:
    """A title from the user always wins; a derived one never replaces the user's."""
    cursor = conn.execute(
        "UPDATE sessions SET title = CASE WHEN ?1 OR NOT title_set_by_user THEN ?2 ELSE title END,"
        " title_set_by_user = title_set_by_user OR ?1 WHERE id = ?3",
        (by_user, title, session_id),
    )
    _require(cursor, session_id)
    index_title(conn, session_id)


def set_archived(conn: sqlite3.Connection, session_id: str, archived: bool) -> None:
    cursor = conn.execute("UPDATE sessions SET archived = ? WHERE id = ?", (archived, session_id))
    _require(cursor, session_id)


def set_status(conn: sqlite3.Connection, session_id: str, status: str) -> None:
    cursor = conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session_id))
    _require(cursor, session_id)


def delete_session(conn: sqlite3.Connection, session_id: str) -> None:
    """Delete a session with its entries, labels, search rows and the images
    no other session shows (no-op if absent)."""
    shas = [
        row[0]
        for row in conn.execute(
            "SELECT DISTINCT b.sha256 FROM entries AS e JOIN entry_blobs AS b ON b.entry_id = e.id"
            " WHERE e.session_id = ?",
            (session_id,),
        )
    ]
    conn.execute(
        "DELETE FROM entries_fts WHERE rowid IN (SELECT rowid FROM entries WHERE session_id = ?)",
        (session_id,),
    )
    conn.execute("DELETE FROM sessions_fts WHERE session_id = ?", (session_id,))
    conn.execute("DELETE FROM drafts WHERE session_key = ?", (session_id,))
    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    conn.executemany(
        "DELETE FROM blobs WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 FROM entry_blobs WHERE sha256 = ?1)",
        [(sha,) for sha in shas],
    )


def set_label(conn: sqlite3.Connection, session_id: str, entry_id: str, label: str | None) -> None:
    """Set or (with ``None``) remove the label of one of the session's entries."""
    if label is None:
        conn.execute(
            "DELETE FROM labels WHERE entry_id = ? AND session_id = ?", (entry_id, session_id)
        )
        return
    cursor = conn.execute(
        "INSERT INTO labels (entry_id, session_id, label, created_at)"
        " SELECT id, session_id, ?, ? FROM entries WHERE id = ? AND session_id = ?"
        " ON CONFLICT (entry_id) DO UPDATE SET label = excluded.label, created_at = excluded.created_at",
        (label, now_iso(), entry_id, session_id),
    )
    if cursor.rowcount == 0:
        raise KeyError(f"no entry {entry_id} in session {session_id}")


def put_blob(conn: sqlite3.Connection, blob: Blob) -> None:
    """Store a blob once per content hash (which must match its bytes)."""
    if hashlib.sha256(blob.data).hexdigest() != blob.sha256:
        raise ValueError(f"blob bytes do not match their sha256 {blob.sha256}")
    conn.execute(
        "INSERT OR IGNORE INTO blobs (sha256, media_type, width, height, bytes) VALUES (?, ?, ?, ?, ?)",
        (blob.sha256, blob.media_type, blob.width, blob.height, blob.data),
    )


def insert_entries(conn: sqlite3.Connection, session_id: str, entries: Sequence[Entry]) -> None:
    """Insert entries with their search rows and update the session's counters;
    an entry saved under a checkpoint's id replaces that checkpoint
    (storage/partials.py).

    A parent must be an entry of the same session, inserted before its child.
    """
    messages = new_leaves = 0
    model = first_message = None
    agents: list[str] = []
    for entry in entries:
        if entry.session_id != session_id:
            raise ValueError(
                f"entry {entry.id} belongs to session {entry.session_id}, not {session_id}"
            )
        if entry.parent_id is None:
            new_leaves += 1
        else:
            parent = conn.execute(
                "SELECT session_id, EXISTS (SELECT 1 FROM entries WHERE parent_id = ?1)"
                " FROM entries WHERE id = ?1",
                (entry.parent_id,),
            ).fetchone()
            if parent is None or parent[0] != session_id:
                raise ValueError(
                    f"parent {entry.parent_id} of {entry.id} is not in session {session_id}"
                )
            new_leaves += parent[1]  # a first child takes its parent's place as a leaf
        conn.execute("DELETE FROM partial_replies WHERE id = ?", (entry.id,))
        rowid = conn.execute(
            f"INSERT INTO entries ({ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", entry_row(entry)
        ).lastrowid
        text = searchable_text(entry)
        if text is not None:
            conn.execute(
                "INSERT INTO entries_fts (rowid, text, entry_id, session_id) VALUES (?, ?, ?, ?)",
                (rowid, text, entry.id, session_id),
            )
        message = entry.message
        if message is None:
            continue
        for image in message.images:
            conn.execute(
                "INSERT OR IGNORE INTO entry_blobs (entry_id, sha256) VALUES (?, ?)",
                (entry.id, image.sha256),
            )
        if message.role not in ("user", "assistant"):
            continue
        messages += 1
        if message.role == "assistant" and message.model:
            model = message.model
        if message.role == "assistant" and message.agent and message.agent not in agents:
            agents.append(message.agent)
        if message.role == "user" and first_message is None and message.text.strip():
            first_message = message.text.strip()[:FIRST_MESSAGE_CHARS]
    if not entries:
        return
    conn.execute(
        "UPDATE sessions SET message_count = message_count + ?, branch_count = branch_count + ?,"
        " model = coalesce(?, model),"
        " first_message = CASE WHEN first_message = '' THEN coalesce(?, '') ELSE first_message END"
        " WHERE id = ?",
        (messages, new_leaves, model, first_message, session_id),
    )
    if agents:
        _add_agents(conn, session_id, agents)


def _add_agents(conn: sqlite3.Connection, session_id: str, names: Sequence[str]) -> None:
    """Add the agents not yet named in the session's ``agents`` (one a line)."""
    row = conn.execute("SELECT agents FROM sessions WHERE id = ?", (session_id,)).fetchone()
    known = row[0].splitlines() if row and row[0] else []
    added = [name for name in names if name not in known]
    if added:
        conn.execute(
            "UPDATE sessions SET agents = ? WHERE id = ?",
            ("\n".join(known + added), session_id),
        )


def index_title(conn: sqlite3.Connection, session_id: str) -> None:
    """Make the title search index hold the session's current title."""
    conn.execute("DELETE FROM sessions_fts WHERE session_id = ?", (session_id,))
    conn.execute(
        "INSERT INTO sessions_fts (title, session_id) SELECT title, id FROM sessions"
        " WHERE id = ? AND title IS NOT NULL",
        (session_id,),
    )


def check_leaf(conn: sqlite3.Connection, session_id: str, leaf_id: str | None) -> None:
    if leaf_id is None:
        return
    found = conn.execute(
        "SELECT 1 FROM entries WHERE id = ? AND session_id = ?", (leaf_id, session_id)
    ).fetchone()
    if found is None:
        raise ValueError(f"leaf {leaf_id} is not an entry of session {session_id}")


def _require(cursor: sqlite3.Cursor, session_id: str) -> None:
    if cursor.rowcount == 0:
        raise KeyError(f"no session {session_id}")


def save_learned_window(conn: sqlite3.Connection, learned: LearnedWindow) -> None:
    conn.execute(
        "INSERT INTO learned_windows (endpoint, model, tokens, source, learned_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (endpoint, model) DO UPDATE SET"
        " tokens = excluded.tokens, source = excluded.source, learned_at = excluded.learned_at",
        (learned.endpoint, learned.model, learned.tokens, learned.source, learned.learned_at),
    )


def save_draft(conn: sqlite3.Connection, session_key: str, text: str) -> None:
    """The unsent text of a session ('' for one not saved yet); empty: none."""
    if text:
        conn.execute(
            "INSERT INTO drafts (session_key, text, saved_at) VALUES (?, ?, ?)"
            " ON CONFLICT (session_key) DO UPDATE SET text = excluded.text,"
            " saved_at = excluded.saved_at",
            (session_key, text, now_iso()),
        )
    else:
        conn.execute("DELETE FROM drafts WHERE session_key = ?", (session_key,))
