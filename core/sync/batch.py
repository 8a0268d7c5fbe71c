"""What a sync reads from the database and writes back in one transaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.sessions.entries import Entry
from core.sessions.persistence import Blob, SessionInfo


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
    labels: dict[tuple[str, str], str | None] = field(default_factory=dict)
    leaves: dict[str, str | None] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    base: dict[str, str] = field(default_factory=dict)
