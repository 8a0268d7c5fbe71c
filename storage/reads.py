"""Read operations: each one statement, run (with decoding) in aiosqlite's
worker thread so a whole read costs one thread hand-off."""

from __future__ import annotations

import sqlite3
from operator import itemgetter

from core.sessions.entries import Entry
from core.sessions.ids import SHORT_ID_LENGTH
from core.sessions.messages import Usage
from core.sessions.persistence import (
    Blob,
    LearnedWindow,
    SearchHit,
    SessionInfo,
    SessionMatch,
    SessionSummary,
)
from core.values import BadValue
from storage.fts import HIGHLIGHT_END, HIGHLIGHT_START, match_query
from storage.rows import (
    ENTRY_COLUMNS,
    SESSION_COLUMNS,
    entries_from_rows,
    entry_from_row,
    session_from_row,
)

SNIPPET_TOKENS = 16
RANK_WINDOW = 1000
"""Searches rank at most this many matches, the newest ones (see :func:`search`)."""

# Walks parent_id up from the leaf: one index lookup per step, so the cost is
# proportional to the depth, not to the size of the session. Rows come out
# leaf first; sorting them in Python (linear on reversed input) is cheaper
# than an ORDER BY, which copies every payload into a sorter.
_PATH = f"""
WITH RECURSIVE up ({ENTRY_COLUMNS}, depth) AS (
    SELECT {ENTRY_COLUMNS}, 0 FROM entries WHERE id = ?
    UNION ALL
    SELECT e.id, e.parent_id, e.session_id, e.type, e.created_at, e.payload, up.depth + 1
    FROM entries AS e JOIN up ON e.id = up.parent_id
)
SELECT {ENTRY_COLUMNS}, depth FROM up
"""


def get_session(conn: sqlite3.Connection, session_id: str) -> SessionInfo | None:
    row = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return session_from_row(row) if row else None


def ids_matching(conn: sqlite3.Connection, table: str, text: str, limit: int) -> list[str]:
    """Ids of ``table`` (``sessions`` or ``entries``) starting with ``text``, in
    order (a range over the primary key: ids are lower-case, and U+10FFFF sorts
    after them), then those ending with it (a short id, :func:`core.sessions.ids.short_id`)."""
    if table not in ("sessions", "entries"):
        raise ValueError(table)
    rows = conn.execute(
        f"SELECT id FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
        (text, text + "\U0010ffff", limit),
    )
    found = [row[0] for row in rows]
    if len(text) >= SHORT_ID_LENGTH and len(found) < limit:
        rows = conn.execute(
            f"SELECT id FROM {table} WHERE substr(id, -?) = ? ORDER BY id LIMIT ?",
            (len(text), text, limit),
        )
        found += [row[0] for row in rows if row[0] not in found][: limit - len(found)]
    return found


def latest_session(conn: sqlite3.Connection) -> SessionInfo | None:
    row = conn.execute(
        f"SELECT {SESSION_COLUMNS} FROM sessions WHERE NOT archived"
        " ORDER BY updated_at DESC, id DESC LIMIT 1"
    ).fetchone()
    return session_from_row(row) if row else None


_SUMMARY_COLUMNS = (
    f"{SESSION_COLUMNS}, message_count, branch_count, first_message, model, agents,"
    " synced_from, synced_at"
)


def list_sessions(
    conn: sqlite3.Connection, limit: int, offset: int, include_archived: bool
) -> list[SessionSummary]:
    rows = conn.execute(
        f"SELECT {_SUMMARY_COLUMNS} FROM sessions WHERE ? OR NOT archived"
        " ORDER BY updated_at DESC, id DESC LIMIT ? OFFSET ?",
        (include_archived, limit, offset),
    ).fetchall()
    return [_summary(row) for row in rows]


def get_summary(conn: sqlite3.Connection, session_id: str) -> SessionSummary | None:
    return _summaries(conn, [session_id], include_archived=True).get(session_id)


def _summary(row: tuple) -> SessionSummary:
    return SessionSummary(
        info=session_from_row(row),
        message_count=row[11],
        branch_count=row[12],
        first_message=row[13],
        model=row[14],
        agents=tuple(row[15].splitlines()),
        synced_from=row[16],
        synced_at=row[17],
    )


def get_entry(conn: sqlite3.Connection, entry_id: str) -> Entry | None:
    row = conn.execute(f"SELECT {ENTRY_COLUMNS} FROM entries WHERE id = ?", (entry_id,)).fetchone()
    return entry_from_row(row) if row else None


def path(conn: sqlite3.Connection, leaf_id: str) -> list[Entry]:
    """Root first. The walk is read row by row so that parent ids edited into
    a loop are caught at the first repeat, and a chain that ends at a missing
    parent is refused: :class:`~core.values.BadValue`. No entry: ``[]``."""
    rows = []
    seen = set()
    for row in conn.execute(_PATH, (leaf_id,)):
        if row[0] in seen:
            raise BadValue(f"entry {row[0]} is its own ancestor (the parent ids form a loop)")
        seen.add(row[0])
        rows.append(row)
    if rows and rows[-1][1] is not None:
        raise BadValue(f"entry {rows[-1][0]} has a parent that is missing ({rows[-1][1]})")
    rows.sort(key=itemgetter(6), reverse=True)
    return entries_from_rows(rows)


def entries(conn: sqlite3.Connection, session_id: str) -> list[Entry]:
    """Every entry of a session, oldest first; parent ids that form a loop are
    refused (:class:`~core.values.BadValue`), as every walk up the tree would
    never end."""
    rows = conn.execute(
        f"SELECT {ENTRY_COLUMNS} FROM entries WHERE session_id = ? ORDER BY created_at, id",
        (session_id,),
    ).fetchall()
    _refuse_loops({row[0]: row[1] for row in rows})
    return entries_from_rows(rows)


def _refuse_loops(parents: dict[str, str | None]) -> None:
    """Walk up from each entry once, in time linear in the number of entries."""
    done: set[str] = set()
    for start in parents:
        walked: set[str] = set()
        current: str | None = start
        while current is not None and current in parents and current not in done:
            if current in walked:
                raise BadValue(f"entry {current} is its own ancestor (the parent ids form a loop)")
            walked.add(current)
            current = parents[current]
        done |= walked


def children(conn: sqlite3.Connection, entry_id: str | None, session_id: str) -> list[Entry]:
    if entry_id is None:
        rows = conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM entries WHERE session_id = ? AND parent_id IS NULL"
            " ORDER BY created_at, id",
            (session_id,),
        )
    else:
        rows = conn.execute(
            f"SELECT {ENTRY_COLUMNS} FROM entries WHERE parent_id = ? AND session_id = ?"
            " ORDER BY created_at, id",
            (entry_id, session_id),
        )
    return entries_from_rows(rows)


def labels(conn: sqlite3.Connection, session_id: str) -> dict[str, str]:
    rows = conn.execute("SELECT entry_id, label FROM labels WHERE session_id = ?", (session_id,))
    return dict(rows.fetchall())


def learned_window(conn: sqlite3.Connection, endpoint: str, model: str) -> LearnedWindow | None:
    row = conn.execute(
        "SELECT tokens, source, learned_at FROM learned_windows WHERE endpoint = ? AND model = ?",
        (endpoint, model),
    ).fetchone()
    return LearnedWindow(endpoint, model, row[0], row[1], row[2]) if row else None


def draft(conn: sqlite3.Connection, session_key: str) -> str:
    row = conn.execute("SELECT text FROM drafts WHERE session_key = ?", (session_key,)).fetchone()
    return row[0] if row else ""


def get_blob(conn: sqlite3.Connection, sha256: str) -> Blob | None:
    row = conn.execute(
        "SELECT sha256, media_type, width, height, bytes FROM blobs WHERE sha256 = ?", (sha256,)
    ).fetchone()
    return Blob(row[0], row[1], row[2], row[3], bytes(row[4])) if row else None


def search(conn: sqlite3.Connection, query: str, limit: int) -> list[SearchHit]:
    """Best matches first (FTS5's bm25 ``rank``: lower is better).

    Ranking costs time in proportion to the number of matches (a common word
    matches most messages), so when more than :data:`RANK_WINDOW` entries
    match, only the newest ``RANK_WINDOW`` of them are ranked. Finding where
    that window starts walks the index in rowid (write) order and stops
    early; a rowid bound then keeps FTS5 from visiting older rows. Snippets
    are made for the returned hits only.
    """
    match = match_query(query)
    if match is None:
        return []
    start = conn.execute(
        "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (match, RANK_WINDOW - 1),
    ).fetchone()
    # Without a window the bound is left out: FTS5 ranks faster without one.
    bound = "AND rowid >= ?" if start else ""
    rows = conn.execute(
        "SELECT f.session_id, f.entry_id, s.title, f.snippet, f.rank, s.updated_at FROM ("
        "  SELECT session_id, entry_id, rank,"
        "   snippet(entries_fts, 0, ?, ?, '…', ?) AS snippet"
        f"  FROM entries_fts WHERE entries_fts MATCH ? {bound} ORDER BY rank LIMIT ?"
        ") AS f JOIN sessions AS s ON s.id = f.session_id ORDER BY f.rank",
        (HIGHLIGHT_START, HIGHLIGHT_END, SNIPPET_TOKENS, match, *(start or ()), limit),
    )
    return [SearchHit(*row) for row in rows]


# Each payload is parsed once (into its usage object, as JSON text) and each
# usage object once per field; only entries that can carry usage are read.
_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "cost.input",
    "cost.output",
    "cost.cache_read",
    "cost.cache_write",
)
_SESSION_USAGE = (
    "SELECT "
    + ", ".join(f"total(json_extract(usage, '$.{name}'))" for name in _USAGE_FIELDS)
    + ", max(coalesce(json_extract(usage, '$.estimated'), 0))"
    + " FROM (SELECT CASE type WHEN 'message' THEN json_extract(payload, '$.usage')"
    " ELSE json_extract(payload, '$.details.usage') END AS usage"
    " FROM entries WHERE session_id = ? AND type IN ('message', 'compaction'))"
    " WHERE usage IS NOT NULL"
)


def session_usage(conn: sqlite3.Connection, session_id: str) -> Usage:
    """Usage summed over every entry of a session (assistant messages and
    compactions' summary requests), every branch."""
    row = conn.execute(_SESSION_USAGE, (session_id,)).fetchone()
    return Usage(
        input_tokens=int(row[0]),
        output_tokens=int(row[1]),
        cache_read_tokens=int(row[2]),
        cache_write_tokens=int(row[3]),
        reasoning_tokens=int(row[4]),
        input_cost=row[5],
        output_cost=row[6],
        cache_read_cost=row[7],
        cache_write_cost=row[8],
        estimated=bool(row[9]),
    )


def search_sessions(
    conn: sqlite3.Connection, query: str, limit: int, include_archived: bool
) -> list[SessionMatch]:
    """Sessions whose title or messages match, best first: sessions whose
    title matches (best title first), then the others by their best message.

    Messages are ranked as in :func:`search` (at most the newest
    :data:`RANK_WINDOW` matches), so a common word finds the sessions of its
    newest matches. Snippets are made in the ranking query: for at most
    RANK_WINDOW rows that costs less than asking FTS5 again for chosen rows.
    """
    match = match_query(query)
    if match is None:
        return []
    titles: dict[str, str] = dict(
        conn.execute(
            "SELECT session_id, highlight(sessions_fts, 0, ?, ?) FROM sessions_fts"
            " WHERE sessions_fts MATCH ? ORDER BY rank LIMIT ?",
            (HIGHLIGHT_START, HIGHLIGHT_END, match, RANK_WINDOW),
        ).fetchall()
    )
    best: dict[str, tuple[str, str]] = {}  # session id -> (snippet, entry id) of its best message
    start = conn.execute(
        "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (match, RANK_WINDOW - 1),
    ).fetchone()
    bound = "AND rowid >= ?" if start else ""
    for session_id, entry_id, snippet in conn.execute(
        "SELECT session_id, entry_id, snippet(entries_fts, 0, ?, ?, '…', ?) FROM entries_fts"
        f" WHERE entries_fts MATCH ? {bound} ORDER BY rank",
        (HIGHLIGHT_START, HIGHLIGHT_END, SNIPPET_TOKENS, match, *(start or ())),
    ):
        best.setdefault(session_id, (snippet, entry_id))
    candidates = list(titles) + [session_id for session_id in best if session_id not in titles]
    summaries = _summaries(conn, candidates, include_archived)
    chosen = [session_id for session_id in candidates if session_id in summaries][:limit]
    matches = []
    for session_id in chosen:
        snippet, entry_id = best.get(session_id, ("", None))
        matches.append(
            SessionMatch(summaries[session_id], titles.get(session_id), snippet, entry_id)
        )
    return matches


_CHUNK = 500  # ids per IN (...), well under SQLite's variable limit


def _summaries(
    conn: sqlite3.Connection, ids: list[str], include_archived: bool
) -> dict[str, SessionSummary]:
    found: dict[str, SessionSummary] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        rows = conn.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM sessions WHERE id IN ({','.join('?' * len(chunk))})"
            " AND (? OR NOT archived)",
            (*chunk, include_archived),
        )
        found.update((row[0], _summary(row)) for row in rows)
    return found
