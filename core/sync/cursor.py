"""What the last sync had read of a folder, to tell whether anything changed.

Each file a device keeps beside its journals (the journals and any copy a sync
engine left) is known by its size and the hash of its last bytes: a file that
grew, shrank or was rewritten shows a different pair, and a sync reads the
folder again. Blobs are not listed: they are read only for an entry that
names them, and an entry arrives in a journal.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from core.sync import folder as layout
from core.sync.hlc import Stamp

_TAIL_BYTES = 4096
"""How much of a file's end is hashed: at least its last line's end."""

Marks = dict[str, tuple[int, str]]
"""A file's path under the folder -> (size, hash of its tail)."""


@dataclass(frozen=True)
class SyncCursor:
    folder: str
    """The folder's resolved path: a cursor holds for that folder only."""
    journals: Marks
    entry_mark: int
    """The highest entries rowid this device had sent or taken."""
    mark_id: str | None
    """The id of the entry at :attr:`entry_mark`: another (or none) there
    means the rowids were renumbered (a VACUUM after a deletion)."""
    clock: str | None
    """The latest clock stamp seen, so new writes stay later than it."""
    settled: bool = True
    """False when entries wait in the folder (or were refused): then the
    cursor is not saved, and the next sync reads everything again."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "journals": self.journals,
                "entry_mark": self.entry_mark,
                "mark_id": self.mark_id,
                "clock": self.clock,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, folder: str, text: str) -> SyncCursor | None:
        """The cursor saved by :meth:`to_json`; None for anything else."""
        try:
            saved = json.loads(text)
            journals = {
                str(name): (int(size), str(tail))
                for name, (size, tail) in saved["journals"].items()
            }
            clock = saved["clock"]
            if clock is not None:
                Stamp.parse(clock)
            mark_id = saved["mark_id"]
            if mark_id is not None and not isinstance(mark_id, str):
                return None
            return cls(folder, journals, int(saved["entry_mark"]), mark_id, clock)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def folder_key(folder: Path) -> str:
    return str(folder.resolve())


def scan(folder: Path) -> Marks:
    """Every file directly in a device's directory, by size and tail hash."""
    marks: Marks = {}
    root = folder / layout.ROOT
    try:
        devices = [entry for entry in os.scandir(root) if entry.is_dir()]
    except OSError:
        return marks
    for device in devices:
        try:
            files = [entry for entry in os.scandir(device.path) if entry.is_file()]
        except OSError:
            continue
        for file in files:
            mark = _mark(file.path)
            if mark is not None:
                marks[f"{device.name}/{file.name}"] = mark
    return marks


def _mark(path: str) -> tuple[int, str] | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, _TAIL_BYTES, max(0, size - _TAIL_BYTES))
    finally:
        os.close(fd)
    return size, hashlib.sha256(tail).hexdigest()
