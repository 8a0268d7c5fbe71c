"""What the last sync had read of a folder, to tell whether anything changed.

Each file a device keeps beside its journals (the journals and any copy a sync
engine left) is known by its :data:`~core.sync.journal.Mark`: where its last
complete line ends and the hash of the bytes before. A file that only grew is
read from there on; one that shrank or was rewritten is read whole again. A
line still being copied does not move the mark, so it is read once whole.
Blobs are not listed: they are read only for an entry that names them, and an
entry arrives in a journal.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from core.sync import folder as layout
from core.sync.hlc import Stamp
from core.sync.journal import Mark, last_mark

Marks = dict[str, Mark]
"""A file's path under the folder (``device/name``) -> its mark."""


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
    """Every journal (and journal copy) in a device's directory, by its mark."""
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
            if not any(kind in file.name for kind in (layout.ENTRIES, layout.REGISTERS)):
                continue
            mark = last_mark(file.path)
            if mark is not None:
                marks[f"{device.name}/{file.name}"] = mark
    return marks
