"""Named, append-only schema migrations.

Each migration is one function in :data:`MIGRATIONS`, applied in order and
recorded by name in the ``migrations`` table; ``PRAGMA user_version`` holds how
many migrations the writing version knew. Never edit or reorder a migration
that has shipped: append a new one.

Statements run one by one with ``execute`` (``executescript`` would commit the
surrounding transaction).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable

from core.sessions.ids import now_iso
from storage.errors import StorageError


def m001_initial(conn: sqlite3.Connection) -> None:
    statements = (
        # message_count (user and assistant messages), branch_count (entries
        # without children), first_message and model (of the latest assistant
        # message) are kept in step by every append so a session list never
        # reads entries. parent_* only remember where a fork came from: no
        # foreign key, a fork outlives its parent.
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            title TEXT,
            title_set_by_user INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            leaf_id TEXT,
            archived INTEGER NOT NULL DEFAULT 0,
            parent_session_id TEXT,
            parent_entry_id TEXT,
            cwd TEXT,
            message_count INTEGER NOT NULL DEFAULT 0,
            branch_count INTEGER NOT NULL DEFAULT 0,
            first_message TEXT NOT NULL DEFAULT '',
            model TEXT
        )""",
        "CREATE INDEX sessions_updated ON sessions (updated_at, id)",
        # Deleting a session cascades to all its entries in one statement;
        # SQLite checks the immediate parent_id constraint at the end of that
        # statement, when parents and children are both gone.
        """CREATE TABLE entries (
            id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            parent_id TEXT REFERENCES entries (id),
            type TEXT NOT NULL,
            created_at TEXT NOT NULL,
            payload TEXT NOT NULL
        )""",
        "CREATE INDEX entries_session ON entries (session_id, created_at)",
        # Serves children (and a session's roots: parent_id IS NULL) in order,
        # and the parent_id foreign key.
        "CREATE INDEX entries_parent ON entries (parent_id, session_id, created_at)",
        """CREATE TABLE labels (
            entry_id TEXT PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            label TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX labels_session ON labels (session_id)",
        """CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            media_type TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            bytes BLOB NOT NULL
        )""",
        # One row per searchable entry; its rowid is the entry's rowid, so a
        # session's rows are deleted by rowid instead of scanning the index.
        """CREATE VIRTUAL TABLE entries_fts USING fts5 (
            text, entry_id UNINDEXED, session_id UNINDEXED,
            tokenize = 'unicode61 remove_diacritics 2'
        )""",
    )
    for sql in statements:
        conn.execute(sql)


def m002_title_search(conn: sqlite3.Connection) -> None:
    """A search index over session titles, so the picker finds sessions by name.

    Keyed by session id (unindexed), not by the sessions table's rowid, which
    VACUUM may renumber."""
    conn.execute(
        """CREATE VIRTUAL TABLE sessions_fts USING fts5 (
            title, session_id UNINDEXED,
            tokenize = 'unicode61 remove_diacritics 2'
        )"""
    )
    conn.execute(
        "INSERT INTO sessions_fts (title, session_id) SELECT title, id FROM sessions WHERE title IS NOT NULL"
    )


def m003_entry_blobs(conn: sqlite3.Connection) -> None:
    """Which entries show which blob, so deleting a session can delete the
    images no other entry shows. Filled from the entries already stored."""
    conn.execute(
        """CREATE TABLE entry_blobs (
            entry_id TEXT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
            sha256 TEXT NOT NULL,
            PRIMARY KEY (entry_id, sha256)
        ) WITHOUT ROWID"""
    )
    conn.execute("CREATE INDEX entry_blobs_sha256 ON entry_blobs (sha256)")
    rows = conn.execute("SELECT id, payload FROM entries WHERE payload LIKE '%\"sha256\"%'")
    conn.executemany(
        "INSERT OR IGNORE INTO entry_blobs (entry_id, sha256) VALUES (?, ?)",
        [
            (entry_id, sha)
            for entry_id, payload in rows.fetchall()
            for sha in blob_shas(json.loads(payload))
        ],
    )


def blob_shas(payload: object) -> set[str]:
    """The sha256 of every image block anywhere in a decoded entry payload."""
    found: set[str] = set()
    stack = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "image" and isinstance(item.get("sha256"), str):
                found.add(item["sha256"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def m004_learned_windows(conn: sqlite3.Connection) -> None:
    # What an endpoint said about a model's context window, and when: asked
    # once, not on every start. tokens 0: nothing answered.
    conn.execute(
        """CREATE TABLE learned_windows (
            endpoint TEXT NOT NULL,
            model TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            source TEXT NOT NULL,
            learned_at TEXT NOT NULL,
            PRIMARY KEY (endpoint, model)
        )"""
    )


def m005_partial_replies(conn: sqlite3.Connection) -> None:
    # A reply still streaming, saved every few seconds under the id its entry
    # will have (storage/partials.py): replaced in place, deleted when that
    # entry is saved, recovered as an incomplete entry when the process that
    # wrote it (owner_pid) is gone. Entries stay write-once.
    conn.execute(
        """CREATE TABLE partial_replies (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            type TEXT NOT NULL,
            created_at TEXT NOT NULL,
            payload TEXT NOT NULL,
            owner_pid INTEGER NOT NULL,
            saved_at TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX partial_replies_session ON partial_replies (session_id)")


def m006_sync_base(conn: sqlite3.Connection) -> None:
    # What the last folder sync left each register as (key -> JSON value), so
    # the next sync tells a change made here from one received.
    conn.execute("CREATE TABLE sync_base (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def m007_drafts(conn: sqlite3.Connection) -> None:
    # What the user typed and has not sent, per session ('' for a session not
    # saved yet): a register replaced in place, never synced.
    conn.execute(
        "CREATE TABLE drafts (session_key TEXT PRIMARY KEY, text TEXT NOT NULL, saved_at TEXT NOT NULL)"
    )


def m008_agent_names(conn: sqlite3.Connection) -> None:
    # The round-table agents that replied in a session, by first reply, one
    # per line, kept in step by every append (the reply's own name is in its
    # payload: "agent"); a session list shows them without reading entries.
    # Older sessions have no agent reply: ''.
    conn.execute("ALTER TABLE sessions ADD COLUMN agents TEXT NOT NULL DEFAULT ''")


def m009_session_status(conn: sqlite3.Connection) -> None:
    # A session's lifecycle (MPLP's dialog status): only an active session
    # takes new entries. A register like archived, which stays separate.
    conn.execute(
        "ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'active'"
        " CHECK (status IN ('active', 'paused', 'completed', 'cancelled'))"
    )


def m010_synced_from(conn: sqlite3.Connection) -> None:
    # The other device that last sent a session entries through a sync folder,
    # and when (UTC): the session picker says so. Known here only, never
    # synced; NULL when none came.
    conn.execute("ALTER TABLE sessions ADD COLUMN synced_from TEXT")
    conn.execute("ALTER TABLE sessions ADD COLUMN synced_at TEXT")


Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS: list[tuple[str, Migration]] = [
    ("m001_initial", m001_initial),
    ("m002_title_search", m002_title_search),
    ("m003_entry_blobs", m003_entry_blobs),
    ("m004_learned_windows", m004_learned_windows),
    ("m005_partial_replies", m005_partial_replies),
    ("m006_sync_base", m006_sync_base),
    ("m007_drafts", m007_drafts),
    ("m008_agent_names", m008_agent_names),
    ("m009_session_status", m009_session_status),
    ("m010_synced_from", m010_synced_from),
]

SCHEMA_VERSION = len(MIGRATIONS)


def check(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> set[str]:
    """The names of the migrations applied to the database behind ``conn``.

    Raises :class:`StorageError` if a newer Tangents made it, or if it is some
    other program's SQLite database.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    applied = set()
    if "migrations" in tables:
        applied = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    elif tables:
        raise StorageError(path, "is an SQLite database, but not one of Tangents")
    known = {name for name, _ in MIGRATIONS}
    if version > SCHEMA_VERSION or not applied <= known:
        raise StorageError(
            path,
            f"created by a newer version of Tangents (schema {version}, this version knows "
            f"{SCHEMA_VERSION}); upgrade Tangents to open it",
        )
    return applied


def migrate(conn: sqlite3.Connection, path: str | os.PathLike[str]) -> None:
    """Apply the pending migrations; run inside a write transaction."""
    applied = check(conn, path)
    pending = [(name, fn) for name, fn in MIGRATIONS if name not in applied]
    if not pending:
        return
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    for name, fn in pending:
        fn(conn)
        conn.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, now_iso()))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
