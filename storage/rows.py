"""Converting between rows and core's types."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from core.sessions.entries import Entry, payload_from_json
from core.sessions.persistence import SessionInfo
from core.values import BadValue

ENTRY_COLUMNS = "id, parent_id, session_id, type, created_at, payload"

# raw_decode skips json.loads' type checks and whitespace scans (a third of
# its time on small payloads); payloads are written by us, without padding.
_decode_json = json.JSONDecoder().raw_decode

SESSION_COLUMNS = (
    "id, title, created_at, updated_at, leaf_id, title_set_by_user, archived, "
    "parent_session_id, parent_entry_id, cwd, status"
)


def entry_row(entry: Entry) -> tuple[Any, ...]:
    """An entry as the values of :data:`ENTRY_COLUMNS`."""
    payload = json.dumps(entry.payload.to_dict(), separators=(",", ":"), ensure_ascii=False)
    return (entry.id, entry.parent_id, entry.session_id, entry.type, entry.created_at, payload)


def entry_from_row(row: tuple[Any, ...]) -> Entry:
    """An entry from its row; a payload that does not decode to its type (edited
    by hand, or by another program) raises :class:`~core.values.BadValue`."""
    kind = row[3]
    try:
        payload = payload_from_json(kind, _decode_json(row[5])[0])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise BadValue(f"entry {row[0]} is damaged ({reason[:200]})") from None
    return Entry.from_row(row[0], row[1], row[2], kind, row[4], payload)


def entries_from_rows(rows: Iterable[tuple[Any, ...]]) -> list[Entry]:
    """Decode many entries."""
    return [entry_from_row(row) for row in rows]


def session_from_row(row: tuple[Any, ...]) -> SessionInfo:
    """A session from the values of :data:`SESSION_COLUMNS` (extra columns ignored)."""
    return SessionInfo(
        id=row[0],
        title=row[1],
        created_at=row[2],
        updated_at=row[3],
        leaf_id=row[4],
        title_set_by_user=bool(row[5]),
        archived=bool(row[6]),
        parent_session_id=row[7],
        parent_entry_id=row[8],
        cwd=row[9],
        status=row[10],
    )
