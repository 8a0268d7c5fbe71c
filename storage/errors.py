"""The one error type storage raises for problems with the database file."""

from __future__ import annotations

import os
import sqlite3


class StorageError(Exception):
    """The database file cannot be used: not SQLite, damaged, locked, made by a
    newer Tangents, or an I/O failure. The message is one line naming the file."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = " ".join(reason.split())
        super().__init__(f"{self.path}: {self.reason}")

    @classmethod
    def from_sqlite(cls, path: str | os.PathLike[str], error: sqlite3.Error) -> StorageError:
        """SQLite's error in one line; every error of the corrupt kind (a damaged
        index says "vtable constructor failed") reads "database disk image is
        malformed", with SQLite's own words beside it when they differ."""
        reason = str(error)
        if getattr(error, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_CORRUPT:
            malformed = "database disk image is malformed"
            reason = malformed if reason == malformed else f"{malformed} ({reason})"
        return cls(path, reason)
