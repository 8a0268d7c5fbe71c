"""The one error type storage raises for problems with the database file."""

from __future__ import annotations

import os


class StorageError(Exception):
    """The database file cannot be used: not SQLite, damaged, locked, made by a
    newer Tangents, or an I/O failure. The message is one line naming the file."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = " ".join(reason.split())
        super().__init__(f"{self.path}: {self.reason}")
