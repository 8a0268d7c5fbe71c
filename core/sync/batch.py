"""What a sync reads from the database and writes back in one transaction."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from core.sessions.entries import Entry
from core.sessions.persistence import Blob, SessionInfo, SessionStore
from core.sync.cursor import SyncCursor


@dataclass(frozen=True)
class LocalSession:
    info: SessionInfo
    entry_ids: frozenset[str]
    labels: Mapping[str, str]


@dataclass(frozen=True)
class LocalSnapshot:
    """Every session's registers and entry ids, and what the last sync left
    them as (``base``: register key -> JSON value), to tell local changes apart."""

    sessions: dict[str, LocalSession]
    base: dict[str, str]
    entry_mark: int = 0
    """The highest entries rowid when the snapshot was read."""


@dataclass(frozen=True)
class RecentChanges:
    """What a sync reads when the folder is as the last sync left it: every
    session's registers (not its entry ids), the base, and the entries added
    after the cursor's mark, in the order they were written."""

    sessions: dict[str, LocalSession]
    base: dict[str, str]
    entries: list[Entry]
    entry_mark: int
    """The highest entries rowid now."""
    mark_id: str | None
    """The id of the entry at the cursor's mark now."""


@dataclass
class SyncBatch:
    """Changes from other devices, applied at once, and the new ``base``."""

    new_sessions: list[SessionInfo] = field(default_factory=list)
    """Created first, with no leaf; their entries are in :attr:`entries`."""
    entries: list[Entry] = field(default_factory=list)
    """Parent before child."""
    blobs: list[Blob] = field(default_factory=list)
    titles: dict[str, tuple[str | None, bool]] = field(default_factory=dict)
    archived: dict[str, bool] = field(default_factory=dict)
    statuses: dict[str, str] = field(default_factory=dict)
    labels: dict[tuple[str, str], str | None] = field(default_factory=dict)
    leaves: dict[str, str | None] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    arrivals: dict[str, str] = field(default_factory=dict)
    """Session id -> the other device that wrote the last of its entries taken
    now (the session picker says where a session came from, and when)."""
    base: dict[str, str] = field(default_factory=dict)
    cursor: SyncCursor | None = None
    """What this sync read, saved with the changes; its ``entry_mark`` is the
    snapshot's, and becomes the highest rowid after the received entries
    unless the database gained entries meanwhile (then no cursor is saved,
    and the next sync reads everything)."""


class SyncStore(SessionStore, Protocol):
    """A session store a sync runs over (here, not in :mod:`core.sessions`,
    which knows nothing of syncs)."""

    async def sync_snapshot(self) -> LocalSnapshot:
        """Every session's registers and entry ids, and the base the last sync saved."""

    async def sync_cursor(self, folder: str) -> SyncCursor | None:
        """What the last sync with ``folder`` had read (None: nothing yet)."""

    async def sync_recent(self, entry_mark: int) -> RecentChanges:
        """Registers, the base and the entries after ``entry_mark``."""

    async def sync_held(
        self, session_ids: Collection[str], entry_ids: Collection[str]
    ) -> dict[str, list[Entry]]:
        """The entries of ``session_ids`` and of every session holding one of
        ``entry_ids``, by session, in the order they were written."""

    async def apply_sync(self, batch: SyncBatch) -> None:
        """Apply what other devices wrote (entries keep their ids) and save the
        new base, in one transaction."""
