"""Persistence for Tangents: sessions, entries, labels, blobs and search in
one SQLite file. Implements :class:`core.sessions.persistence.SessionStore`; never imports
the TUI."""

from storage.errors import StorageError
from storage.store import SqliteStore

__all__ = ["SqliteStore", "StorageError"]
