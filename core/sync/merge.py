"""What the folder says, merged from every device's journals (pure).

Entries are a union by id: the first copy read is kept (this device's own
first), and a copy with the same id but other content is refused with a
one-line report naming both devices. Registers are last-writer-wins by
:class:`~core.sync.hlc.Stamp`; the leaf is kept per device; a deletion
tombstone wins over every older write to its session, and a later write
(a rename, a continuation) brings the session back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.sessions.entries import Entry
from core.sessions.persistence import SESSION_STATES
from core.sync.hlc import Stamp

REGISTERS = ("title", "archived", "status", "label", "leaf", "deleted")


@dataclass(frozen=True)
class Write:
    stamp: Stamp
    value: Any


@dataclass
class FolderView:
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Session id -> its ``session`` line (identity: created_at, cwd, fork origin)."""
    entries: dict[str, Entry] = field(default_factory=dict)
    by_session: dict[str, list[str]] = field(default_factory=dict)
    """Session id -> its entry ids, in the order read."""
    registers: dict[tuple[str, str], Write] = field(default_factory=dict)
    """``("title", sid)``, ``("archived", sid)`` -> the winner."""
    labels: dict[str, dict[str, Write]] = field(default_factory=dict)
    """Session id -> entry id -> the winning label (None: removed)."""
    leaves: dict[str, dict[str, Write]] = field(default_factory=dict)
    """Session id -> device -> where that device was last."""
    tombstones: dict[str, Stamp] = field(default_factory=dict)
    last_write: dict[str, Stamp] = field(default_factory=dict)
    """Session id -> its latest register write other than a deletion."""
    refused: list[str] = field(default_factory=list)
    skipped: int = 0
    """Complete lines that were not journal lines (damaged or unknown)."""
    latest: Stamp | None = None
    earliest: Stamp | None = None
    """The earliest register write read: a read of only what journals gained
    since a sync settles registers alone only when this is later than
    everything that sync had seen."""
    _origin: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _reported: set[tuple[str, str]] = field(default_factory=set)

    def dead(self, session_id: str) -> bool:
        tomb = self.tombstones.get(session_id)
        if tomb is None:
            return False
        last = self.last_write.get(session_id)
        return last is None or tomb > last

    def add_entry_line(self, device: str, line: dict[str, Any]) -> None:
        kind = line.get("t")
        if kind == "session" and isinstance(line.get("session"), dict):
            session = line["session"]
            if isinstance(session.get("id"), str) and isinstance(session.get("created_at"), str):
                self.sessions.setdefault(session["id"], session)
                return
        if kind == "entry" and isinstance(line.get("entry"), dict):
            self._add_entry(device, line["entry"])
            return
        self.skipped += 1

    def _add_entry(self, device: str, data: dict[str, Any]) -> None:
        try:
            entry = Entry.from_dict(data)
        except (KeyError, ValueError, TypeError, AttributeError):
            self.skipped += 1
            return
        if not isinstance(entry.id, str) or not isinstance(entry.session_id, str):
            self.skipped += 1
            return
        first = self._origin.get(entry.id)
        if first is None:
            self._origin[entry.id] = (device, data)
            self.entries[entry.id] = entry
            self.by_session.setdefault(entry.session_id, []).append(entry.id)
        elif first[1] != data and (entry.id, device) not in self._reported:
            self._reported.add((entry.id, device))
            self.refused.append(
                f"entry {entry.id} from device {device} differs from device {first[0]}'s "
                "copy: kept the first, refused the other"
            )

    def device_of(self, entry_id: str) -> str | None:
        """The device whose journal held the copy of the entry that was kept."""
        first = self._origin.get(entry_id)
        return None if first is None else first[0]

    def add_register_line(self, device: str, line: dict[str, Any]) -> None:
        kind, session_id, value = line.get("t"), line.get("s"), line.get("v")
        try:
            stamp = Stamp.parse(line["at"])
        except (KeyError, ValueError, AttributeError):
            self.skipped += 1
            return
        if kind not in REGISTERS or not isinstance(session_id, str) or not _valid(kind, line):
            self.skipped += 1
            return
        if self.latest is None or stamp > self.latest:
            self.latest = stamp
        if self.earliest is None or stamp < self.earliest:
            self.earliest = stamp
        latest = self.tombstones if kind == "deleted" else self.last_write
        if session_id not in latest or stamp > latest[session_id]:
            latest[session_id] = stamp
        if kind == "deleted":
            return
        if kind == "leaf":
            mine = self.leaves.setdefault(session_id, {})
            if device not in mine or stamp > mine[device].stamp:
                mine[device] = Write(stamp, value)
            return
        if kind == "label":
            table = self.labels.setdefault(session_id, {})
            current = table.get(line["e"])
            if current is None or stamp > current.stamp:
                table[line["e"]] = Write(stamp, value)
            return
        current = self.registers.get((kind, session_id))
        if current is None or stamp > current.stamp:
            self.registers[(kind, session_id)] = Write(stamp, value)

    def value(self, kind: str, session_id: str) -> Write | None:
        return self.registers.get((kind, session_id))


def _valid(kind: str, line: dict[str, Any]) -> bool:
    value = line.get("v")
    if kind == "title":
        return (
            isinstance(value, dict)
            and isinstance(value.get("title"), (str, type(None)))
            and isinstance(value.get("by_user"), bool)
        )
    if kind == "archived":
        return isinstance(value, bool)
    if kind == "status":
        return value in SESSION_STATES
    if kind == "label":
        return isinstance(line.get("e"), str) and isinstance(value, (str, type(None)))
    if kind == "leaf":
        return isinstance(value, (str, type(None)))
    return True
