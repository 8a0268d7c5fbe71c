"""The persistence protocol core talks to; ``storage`` implements it on SQLite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.sessions.entries import Entry
from core.sessions.messages import Usage

SESSION_STATES: tuple[str, ...] = ("active", "paused", "completed", "cancelled")
"""A session's lifecycle (MPLP's dialog status): only an active session takes
new entries; the others open read-only until set back to active."""


@dataclass(frozen=True)
class SessionInfo:
    """A session row: its identity and its mutable registers."""

    id: str
    title: str | None
    created_at: str
    updated_at: str
    leaf_id: str | None = None
    title_set_by_user: bool = False
    archived: bool = False
    parent_session_id: str | None = None
    parent_entry_id: str | None = None
    cwd: str | None = None
    status: str = "active"
    """One of :data:`SESSION_STATES`; separate from ``archived`` (hidden from lists)."""

    @property
    def active(self) -> bool:
        return self.status == "active"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "leaf_id": self.leaf_id,
            "title_set_by_user": self.title_set_by_user,
            "archived": self.archived,
            "parent_session_id": self.parent_session_id,
            "parent_entry_id": self.parent_entry_id,
            "cwd": self.cwd,
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionInfo:
        return cls(
            id=data["id"],
            title=data.get("title"),
            created_at=data["created_at"],
            updated_at=data.get("updated_at", data["created_at"]),
            leaf_id=data.get("leaf_id"),
            title_set_by_user=bool(data.get("title_set_by_user", False)),
            archived=bool(data.get("archived", False)),
            parent_session_id=data.get("parent_session_id"),
            parent_entry_id=data.get("parent_entry_id"),
            cwd=data.get("cwd"),
            status=_state(data.get("status", "active")),
        )


def _state(value: object) -> str:
    if value not in SESSION_STATES:
        raise ValueError(f"unknown session status {value!r} (one of {', '.join(SESSION_STATES)})")
    return str(value)


@dataclass(frozen=True)
class SessionSummary:
    """What a session list shows, without reading the whole session."""

    info: SessionInfo
    message_count: int
    branch_count: int = 1
    first_message: str = ""
    model: str | None = None
    agents: tuple[str, ...] = ()
    """The round-table agents that replied, in the order they first did."""
    synced_from: str | None = None
    """The other device whose entries of this session a sync took last; None: none came."""
    synced_at: str | None = None
    """When they were taken (UTC, ISO 8601)."""

    @property
    def alternatives(self) -> int:
        """Alternative messages the session holds: replies regenerated or compared,
        edited questions. Each adds one leaf to the tree (a branch point with n
        children has n - 1 alternatives), so this is the leaves beyond the first."""
        return max(0, self.branch_count - 1)


@dataclass(frozen=True)
class SearchHit:
    session_id: str
    entry_id: str
    title: str | None
    snippet: str
    """Matched text with matches wrapped in ``\\x02``/``\\x03`` (start/end) markers."""
    rank: float
    updated_at: str


@dataclass(frozen=True)
class SessionMatch:
    """A session found by a search, with why it matched (matches marked with
    ``\x02``/``\x03`` as in :class:`SearchHit`)."""

    summary: SessionSummary
    title: str | None
    """The marked title, when the title matched."""
    snippet: str
    """The marked text of its best matching message ("" when only the title matched)."""
    entry_id: str | None
    """That message's entry."""


@dataclass(frozen=True)
class Blob:
    sha256: str
    media_type: str
    width: int
    height: int
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class LearnedWindow:
    """A model's context window as its endpoint reported it."""

    endpoint: str
    model: str
    tokens: int
    """0: the endpoint was asked and nothing answered."""
    source: str
    """What said it (``vllm``, ``llama.cpp``, ``ollama``, ``lm-studio``) or ``none``."""
    learned_at: str


class ConflictError(ValueError):
    """An id to be inserted is already in the database (a session imported twice)."""


class SessionStore(Protocol):
    """Everything core needs from persistence. Every write is atomic."""

    async def create_session(self, info: SessionInfo, entries: Sequence[Entry] = ()) -> None:
        """Insert a session (and optionally its first entries) in one transaction."""

    async def import_session(
        self,
        info: SessionInfo,
        entries: Sequence[Entry],
        labels: Mapping[str, str] | None = None,
        blobs: Sequence[Blob] = (),
    ) -> None:
        """Insert a whole session (entries parent first), its labels and image
        blobs in one transaction; :class:`ConflictError` if the session or any
        entry id already exists, and then nothing is written."""

    async def get_session(self, session_id: str) -> SessionInfo | None: ...

    async def latest_session(self) -> SessionInfo | None:
        """The most recently updated, unarchived session."""

    async def list_sessions(
        self, limit: int = 100, offset: int = 0, include_archived: bool = False
    ) -> list[SessionSummary]: ...

    async def get_summary(self, session_id: str) -> SessionSummary | None:
        """One session's list row, archived or not."""

    async def append(
        self,
        session_id: str,
        entries: Sequence[Entry],
        leaf_id: str | None,
        title: str | None = None,
    ) -> None:
        """Append entries and move the leaf (and set a derived title) atomically."""

    async def set_leaf(self, session_id: str, leaf_id: str | None) -> None: ...

    async def set_title(self, session_id: str, title: str, by_user: bool = True) -> None: ...

    async def set_archived(self, session_id: str, archived: bool) -> None: ...

    async def set_status(self, session_id: str, status: str) -> None:
        """Set the session's lifecycle state (one of :data:`SESSION_STATES`)."""

    async def delete_session(self, session_id: str) -> None: ...

    async def get_entry(self, entry_id: str) -> Entry | None: ...

    async def path(self, leaf_id: str) -> list[Entry]:
        """Entries from the root down to ``leaf_id`` (inclusive)."""

    async def entries(self, session_id: str) -> list[Entry]:
        """Every entry of a session, ordered by creation."""

    async def children(self, entry_id: str | None, session_id: str) -> list[Entry]:
        """Direct children ordered by creation (``None``: the session's roots)."""

    async def save_partial(self, entry: Entry) -> None:
        """Checkpoint a reply still streaming as ``entry`` will be (replaced in
        place at each call); appending an entry with its id replaces the
        checkpoint in the same transaction."""

    async def recover_partials(self, session_id: str) -> list[Entry]:
        """Append the session's checkpoints left by a process that is gone,
        as they stood, moving the leaf onto one that continues it; returns them."""

    async def set_label(self, session_id: str, entry_id: str, label: str | None) -> None: ...

    async def labels(self, session_id: str) -> dict[str, str]: ...

    async def put_blob(self, blob: Blob) -> None: ...

    async def get_blob(self, sha256: str) -> Blob | None: ...

    async def search(self, query: str, limit: int = 50) -> list[SearchHit]: ...

    async def session_usage(self, session_id: str) -> Usage:
        """Usage summed over every entry of the session, all branches (one
        aggregate query): assistant messages and compactions' summary requests."""

    async def search_sessions(
        self, query: str, limit: int = 100, include_archived: bool = False
    ) -> list[SessionMatch]:
        """Sessions whose title or messages match ``query``, best first."""

    async def learned_window(self, endpoint: str, model: str) -> LearnedWindow | None:
        """What ``endpoint`` last said about ``model``'s window, if it was asked."""

    async def save_learned_window(self, learned: LearnedWindow) -> None:
        """Remember (or replace) what an endpoint said about a model's window."""

    async def draft(self, session_key: str) -> str:
        """What was typed and not sent in a session (its id; '' for a new session
        not saved yet); empty when nothing was."""

    async def save_draft(self, session_key: str, text: str) -> None:
        """Keep (or, empty, forget) a session's unsent text."""

    async def close(self) -> None: ...
