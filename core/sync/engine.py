"""One sync between the database and the folder.

Read every device's journals; send what this device has that the folder
lacks (entries, their images, register changes since the last sync); then
take what others wrote, in one database transaction. Journal lines are
written before the database changes: a sync killed between the two sends
the same changes again next time, and the union makes that harmless.

When every file in the folder is as the last sync left it (see
:mod:`core.sync.cursor`), no journal is read: the sync only sends what was
added here since, and with nothing new it writes nothing at all. When other
devices' journals only grew, only what they gained is read, and merged with
the sessions it names; the whole folder is read again when that cannot
settle everything (see :func:`_sync_changes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.sessions.entries import Entry
from core.sessions.persistence import Blob, SessionInfo
from core.sync import folder as layout
from core.sync.batch import LocalSession, LocalSnapshot, RecentChanges, SyncBatch, SyncStore
from core.sync.cursor import Marks, SyncCursor, folder_key, scan
from core.sync.hlc import Clock, Stamp, wall_ms
from core.sync.journal import append_lines, last_mark
from core.sync.merge import FolderView
from core.sync.plan import descends, encode, image_hashes, key, parent_first
from core.sync.reading import read_changes, read_folder
from core.sync.seal import Seal, folder_seal


@dataclass
class SyncReport:
    device: str
    sent_sessions: set[str] = field(default_factory=set)
    sent_entries: int = 0
    received_sessions: set[str] = field(default_factory=set)
    received_entries: int = 0
    deleted: int = 0
    """Sessions deleted here because another device deleted them."""
    waiting: int = 0
    """Entries in the folder not taken yet: their parent or image has not arrived."""
    refused: list[str] = field(default_factory=list)
    skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "sent": {"sessions": len(self.sent_sessions), "entries": self.sent_entries},
            "received": {
                "sessions": len(self.received_sessions),
                "entries": self.received_entries,
            },
            "deleted": self.deleted,
            "waiting": self.waiting,
            "refused": self.refused,
            "skipped_lines": self.skipped,
        }

    def summary(self) -> str:
        text = (
            f"sent {_count(self.sent_entries, 'entry')} in {_count(len(self.sent_sessions), 'session')}, "
            f"received {_count(self.received_entries, 'entry')} in "
            f"{_count(len(self.received_sessions), 'session')}"
        )
        if self.deleted:
            text += f", deleted {_count(self.deleted, 'session')}"
        if self.waiting:
            text += f"; {_count(self.waiting, 'entry')} waiting for the rest to arrive"
        return text


def _count(number: int, word: str) -> str:
    plural = word[:-1] + "ies" if word.endswith("y") else word + "s"
    return f"{number} {word if number == 1 else plural}"


async def sync_folder(
    store: SyncStore,
    folder: Path,
    device: str,
    now: Callable[[], int] = wall_ms,
    passphrase: str | None = None,
) -> SyncReport:
    """One sync; ``passphrase`` opens (or seals) an encrypted folder, and
    :class:`~core.sync.seal.SealError` says in one line why it does not."""
    seal = folder_seal(layout.marker(folder), passphrase, bool(layout.devices(folder, "")[1:]))
    cursor = await store.sync_cursor(folder_key(folder))
    if cursor is not None:
        recent = await store.sync_recent(cursor.entry_mark)
        if recent.mark_id == cursor.mark_id:
            if cursor.journals == scan(folder):
                return await _send_recent(store, folder, seal, device, now, cursor, recent)
            report = await _sync_changes(store, folder, seal, device, now, cursor, recent)
            if report is not None:
                return report
    return await _sync_all(store, folder, seal, device, now)


async def _sync_all(
    store: SyncStore, folder: Path, seal: Seal, device: str, now: Callable[[], int]
) -> SyncReport:
    view, marks = read_folder(folder, device, seal)
    snapshot = await store.sync_snapshot()
    clock = Clock(device, now)
    if view.latest is not None:
        clock.observe(view.latest)
    report = SyncReport(device)
    outgoing = _Outgoing()
    base_labels = _base_labels(snapshot.base)
    for local in snapshot.sessions.values():
        await _send_session(store, folder, seal, view, local, clock, outgoing, report)
        _register_lines(local, snapshot.base, base_labels, clock, outgoing, report)
    _tombstones(snapshot.base, snapshot.sessions, view.dead, clock, outgoing)
    for line in outgoing.entries:
        view.add_entry_line(device, line)
    for line in outgoing.registers:
        view.add_register_line(device, line)
    _write(folder, seal, device, outgoing)
    batch = await _receive(store, folder, seal, view, snapshot, device, report)
    settled = not (report.waiting or view.refused)
    marks.update(_own_marks(folder, device))
    batch.cursor = SyncCursor(
        folder_key(folder), marks, snapshot.entry_mark, None, str(clock.last), settled
    )
    await store.apply_sync(batch)
    report.refused = list(view.refused)
    report.skipped = view.skipped
    return report


async def _sync_changes(
    store: SyncStore,
    folder: Path,
    seal: Seal,
    device: str,
    now: Callable[[], int],
    cursor: SyncCursor,
    recent: RecentChanges,
) -> SyncReport | None:
    """A sync that reads only what other devices' journals gained since the
    last, merged with the sessions it names (their entries read from the
    database). None, having written nothing, when those lines alone cannot
    settle it: a register write no later than what the last sync saw (the
    winner may lie in what was not read), a session known neither here nor
    by a line read, an entry that waits or is refused, this device's own
    journals changed by another hand. Then the whole folder is read."""
    read = read_changes(folder, device, seal, cursor.journals)
    if read is None or cursor.clock is None:
        return None
    view, marks = read
    seen = Stamp.parse(cursor.clock)
    if view.earliest is not None and view.earliest <= seen:
        return None
    named = _named(view)
    if any(
        sid not in recent.sessions and sid not in view.sessions and not view.dead(sid)
        for sid in named
    ):
        return None
    held = await store.sync_held(named, view.entries.keys())
    sessions = dict(recent.sessions)
    for sid in (named | held.keys()) & sessions.keys():
        local = sessions[sid]
        entries = held.get(sid, [])
        for entry in entries:
            copy = view.entries.setdefault(entry.id, entry)
            if copy is not entry and copy.to_dict() != entry.to_dict():
                return None
        sessions[sid] = replace(local, entry_ids=frozenset(entry.id for entry in entries))
        view.sessions.setdefault(sid, _identity(local.info))
    clock = Clock(device, now)
    clock.observe(seen)
    if view.latest is not None:
        clock.observe(view.latest)
    report = SyncReport(device)
    out = await _recent_lines(store, folder, seal, device, recent, clock, report, view.dead)
    for line in out.registers:
        view.add_register_line(device, line)
    snapshot = LocalSnapshot(sessions, recent.base, recent.entry_mark)
    batch = await _receive(store, folder, seal, view, snapshot, device, report)
    if report.waiting or report.refused or view.refused:
        return None
    _write(folder, seal, device, out)
    marks.update(_own_marks(folder, device))
    batch.cursor = SyncCursor(folder_key(folder), marks, recent.entry_mark, None, str(clock.last))
    await store.apply_sync(batch)
    report.skipped = view.skipped
    return report


def _named(view: FolderView) -> set[str]:
    """Every session a line of ``view`` is about."""
    return (
        view.sessions.keys()
        | view.by_session.keys()
        | {sid for _, sid in view.registers}
        | view.labels.keys()
        | view.leaves.keys()
        | view.tombstones.keys()
    )


async def _recent_lines(
    store: SyncStore,
    folder: Path,
    seal: Seal,
    device: str,
    recent: RecentChanges,
    clock: Clock,
    report: SyncReport,
    dead: Callable[[str], bool],
) -> _Outgoing:
    """The lines that send what was added or changed here since the last
    sync: new sessions, their entries in the order written (parent first),
    register changes and deletions."""
    out = _Outgoing()
    base_labels = _base_labels(recent.base)
    new: dict[str, list[Entry]] = {}
    for entry in recent.entries:
        new.setdefault(entry.session_id, []).append(entry)
    for local in recent.sessions.values():
        sid = local.info.id
        if key("alive", sid) not in recent.base:
            out.entries.append({"t": "session", "session": _identity(local.info)})
        for entry in new.get(sid, ()):
            out.entries.append({"t": "entry", "entry": entry.to_dict()})
            await _add_blobs(store, folder, seal, device, entry, out)
            report.sent_entries += 1
            report.sent_sessions.add(sid)
        _register_lines(local, recent.base, base_labels, clock, out, report)
    _tombstones(recent.base, recent.sessions, dead, clock, out)
    return out


async def _send_recent(
    store: SyncStore,
    folder: Path,
    seal: Seal,
    device: str,
    now: Callable[[], int],
    cursor: SyncCursor,
    recent: RecentChanges,
) -> SyncReport:
    """A sync over a folder unchanged since the last: send what was added or
    changed here since; with nothing, touch nothing."""
    clock = Clock(device, now)
    if cursor.clock is not None:
        clock.observe(Stamp.parse(cursor.clock))
    report = SyncReport(device)
    out = await _recent_lines(store, folder, seal, device, recent, clock, report, lambda sid: False)
    if not (out.entries or out.registers):
        return report
    _write(folder, seal, device, out)
    # The base of every session written about becomes what it is here.
    touched = report.sent_sessions | {line["s"] for line in out.registers}
    base = {
        name: value for name, value in recent.base.items() if name.split(" ", 2)[1] not in touched
    }
    for sid in touched & recent.sessions.keys():
        info = recent.sessions[sid].info
        labels: dict[str, str | None] = dict(recent.sessions[sid].labels)
        final = _Final(
            info.title, info.title_set_by_user, info.archived, info.status, info.leaf_id, labels
        )
        base.update(final.base(sid))
    saved = SyncCursor(folder_key(folder), scan(folder), recent.entry_mark, None, str(clock.last))
    await store.apply_sync(SyncBatch(base=base, cursor=saved))
    return report


def _own_marks(folder: Path, device: str) -> Marks:
    """The marks of this device's own journals, as it just wrote them."""
    marks: Marks = {}
    for kind in (layout.ENTRIES, layout.REGISTERS):
        path = layout.own_journal(folder, device, kind)
        mark = last_mark(path)
        if mark is not None:
            marks[f"{device}/{path.name}"] = mark
    return marks


def _write(folder: Path, seal: Seal, device: str, out: _Outgoing) -> None:
    for blob in out.blobs:
        layout.write_blob(folder, device, blob, seal)
    for kind, lines in ((layout.ENTRIES, out.entries), (layout.REGISTERS, out.registers)):
        sealed = [seal.close(line, device, kind) for line in lines]
        append_lines(layout.own_journal(folder, device, kind), sealed)


@dataclass
class _Outgoing:
    entries: list[dict[str, Any]] = field(default_factory=list)
    registers: list[dict[str, Any]] = field(default_factory=list)
    blobs: list[Blob] = field(default_factory=list)


async def _send_session(
    store: SyncStore,
    folder: Path,
    seal: Seal,
    view: FolderView,
    local: LocalSession,
    clock: Clock,
    out: _Outgoing,
    report: SyncReport,
) -> None:
    """The session's identity line and the entries the folder lacks."""
    info = local.info
    sid = info.id
    if sid not in view.sessions:
        out.entries.append({"t": "session", "session": _identity(info)})
    unsent = [entry_id for entry_id in local.entry_ids if entry_id not in view.entries]
    if unsent:
        wanted = set(unsent)
        entries = [entry for entry in await store.entries(sid) if entry.id in wanted]
        for entry in parent_first(entries, view.entries):
            out.entries.append({"t": "entry", "entry": entry.to_dict()})
            await _add_blobs(store, folder, seal, clock.device, entry, out)
        report.sent_entries += len(entries)
        report.sent_sessions.add(sid)


async def _add_blobs(
    store: SyncStore, folder: Path, seal: Seal, device: str, entry: Entry, out: _Outgoing
) -> None:
    """The images ``entry`` shows that this device's folder lacks."""
    for sha in image_hashes(entry):
        if layout.blob_path(folder, device, seal.blob_name(sha)).exists():
            continue
        blob = await store.get_blob(sha)
        if blob is not None and all(b.sha256 != sha for b in out.blobs):
            out.blobs.append(blob)


def _register_lines(
    local: LocalSession,
    base: dict[str, str],
    base_labels: dict[str, set[str]],
    clock: Clock,
    out: _Outgoing,
    report: SyncReport,
) -> None:
    """A line for each register changed here since the last sync (``base``)."""
    info = local.info
    sid = info.id
    current: dict[str, tuple[str, Any]] = {
        key("title", sid): ("title", {"title": info.title, "by_user": info.title_set_by_user}),
        key("archived", sid): ("archived", info.archived),
        key("status", sid): ("status", info.status),
        key("leaf", sid): ("leaf", info.leaf_id),
    }
    labelled = set(local.labels) | base_labels.get(sid, set())
    for entry_id in labelled:
        current[key("label", sid, entry_id)] = ("label", local.labels.get(entry_id))
    for name, (kind, value) in current.items():
        if base.get(name) == encode(value):
            continue
        line = {"t": kind, "s": sid, "v": value, "at": str(clock.tick())}
        if kind == "label":
            line["e"] = name.rsplit(" ", 1)[1]
        out.registers.append(line)
        report.sent_sessions.add(sid)


def _tombstones(
    base: dict[str, str],
    sessions: dict[str, LocalSession],
    dead: Callable[[str], bool],
    clock: Clock,
    out: _Outgoing,
) -> None:
    """A deletion line for each synced session deleted here since."""
    for name in base:
        kind, _, session_id = name.partition(" ")
        if kind == "alive" and session_id not in sessions and not dead(session_id):
            out.registers.append({"t": "deleted", "s": session_id, "at": str(clock.tick())})


def _base_labels(base: dict[str, str]) -> dict[str, set[str]]:
    """Session id -> the entries labelled in the base."""
    labelled: dict[str, set[str]] = {}
    for name in base:
        kind, _, rest = name.partition(" ")
        if kind == "label":
            sid, _, entry_id = rest.partition(" ")
            labelled.setdefault(sid, set()).add(entry_id)
    return labelled


def _identity(info: SessionInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "created_at": info.created_at,
        "cwd": info.cwd,
        "parent_session_id": info.parent_session_id,
        "parent_entry_id": info.parent_entry_id,
    }


async def _receive(
    store: SyncStore,
    folder: Path,
    seal: Seal,
    view: FolderView,
    snapshot: LocalSnapshot,
    device: str,
    report: SyncReport,
) -> SyncBatch:
    """What to take from the folder, and the base every register ends as."""
    batch = SyncBatch()
    known = {entry_id for local in snapshot.sessions.values() for entry_id in local.entry_ids}
    names = layout.devices(folder, device)
    local_blobs: set[str] = set()

    async def has_images(entry: Entry) -> bool:
        for sha in image_hashes(entry) - local_blobs:
            if await store.get_blob(sha) is None:
                blob = layout.read_blob(folder, names, sha, seal)
                if blob is None:
                    return False
                batch.blobs.append(blob)
            local_blobs.add(sha)
        return True

    for sid, identity in view.sessions.items():
        local = snapshot.sessions.get(sid)
        if view.dead(sid):
            if local is not None:
                batch.deleted.append(sid)
                report.deleted += 1
            continue
        have = set(local.entry_ids) if local else set()
        pending = [
            view.entries[entry_id]
            for entry_id in view.by_session.get(sid, ())
            if entry_id not in have
        ]
        foreign = [entry for entry in pending if entry.id in known]
        for entry in foreign:
            report.refused.append(
                f"entry {entry.id} of session {sid} has the id of an entry of another session: refused"
            )
        pending = [entry for entry in pending if entry.id not in known]
        missing = {entry.id for entry in pending if not await has_images(entry)}
        taken = parent_first(pending, have, missing)
        report.waiting += len(pending) - len(taken)
        if local is None and not taken and view.by_session.get(sid):
            continue
        present = have | {entry.id for entry in taken}
        batch.entries.extend(taken)
        if taken:
            report.received_entries += len(taken)
            report.received_sessions.add(sid)
            writer = view.device_of(taken[-1].id)
            if writer is not None and writer != device:
                batch.arrivals[sid] = writer
        final = _registers(view, sid, local, present, device)
        if local is None:
            batch.new_sessions.append(_new_info(identity, final))
            report.received_sessions.add(sid)
        else:
            _register_changes(batch, local, final, report)
        if local is None or final.leaf != local.info.leaf_id:
            batch.leaves[sid] = final.leaf
        for entry_id, label in final.labels.items():
            if local is None or local.labels.get(entry_id) != label:
                batch.labels[(sid, entry_id)] = label
        batch.base.update(final.base(sid))
    # Sessions of this device the folder does not show yet keep their base.
    for sid, local in snapshot.sessions.items():
        if sid not in view.sessions:
            final = _registers(view, sid, local, set(local.entry_ids), device)
            batch.base.update(final.base(sid))
    return batch


@dataclass
class _Final:
    title: str | None
    by_user: bool
    archived: bool
    status: str
    leaf: str | None
    labels: dict[str, str | None]

    def base(self, sid: str) -> dict[str, str]:
        values = {
            key("alive", sid): encode(True),
            key("title", sid): encode({"title": self.title, "by_user": self.by_user}),
            key("archived", sid): encode(self.archived),
            key("status", sid): encode(self.status),
            key("leaf", sid): encode(self.leaf),
        }
        for entry_id, label in self.labels.items():
            if label is not None:
                values[key("label", sid, entry_id)] = encode(label)
        return values


def _registers(
    view: FolderView, sid: str, local: LocalSession | None, present: set[str], device: str
) -> _Final:
    """The registers a session ends with: the folder's winners (this device's
    own changes were added to the folder first), and this device's leaf."""
    title = view.value("title", sid)
    archived = view.value("archived", sid)
    status = view.value("status", sid)
    labels: dict[str, str | None] = dict(local.labels) if local else {}
    for entry_id, write in view.labels.get(sid, {}).items():
        if entry_id in present:
            labels[entry_id] = write.value
    return _Final(
        title=title.value["title"] if title else (local.info.title if local else None),
        by_user=title.value["by_user"] if title else bool(local and local.info.title_set_by_user),
        archived=archived.value if archived else bool(local and local.info.archived),
        status=status.value if status else (local.info.status if local else "active"),
        leaf=_leaf(view, sid, local, present, device),
        labels=labels,
    )


def _leaf(
    view: FolderView, sid: str, local: LocalSession | None, present: set[str], device: str
) -> str | None:
    """Where this device is: where it was, moved forward to another device's
    later position when that continues the same path; in a new session, where
    its last writer was."""
    leaves = view.leaves.get(sid, {})
    others = sorted(
        (write for name, write in leaves.items() if name != device and write.value in present),
        key=lambda write: write.stamp,
        reverse=True,
    )
    if local is None:
        return others[0].value if others else (max(present) if present else None)
    here = local.info.leaf_id
    mine = leaves.get(device)
    for write in others:
        if mine is not None and write.stamp < mine.stamp:
            break
        if here is None or descends(_parent_of(view), write.value, here):
            return write.value
    return here


def _parent_of(view: FolderView) -> Callable[[str], str | None]:
    def parent(entry_id: str) -> str | None:
        entry = view.entries.get(entry_id)
        return entry.parent_id if entry else None

    return parent


def _new_info(identity: dict[str, Any], final: _Final) -> SessionInfo:
    def text(name: str) -> str | None:
        value = identity.get(name)
        return value if isinstance(value, str) else None

    return SessionInfo(
        id=identity["id"],
        title=final.title,
        created_at=identity["created_at"],
        updated_at=identity["created_at"],
        title_set_by_user=final.by_user,
        archived=final.archived,
        status=final.status,
        parent_session_id=text("parent_session_id"),
        parent_entry_id=text("parent_entry_id"),
        cwd=text("cwd"),
    )


def _register_changes(
    batch: SyncBatch, local: LocalSession, final: _Final, report: SyncReport
) -> None:
    info = local.info
    sid = info.id
    if (final.title, final.by_user) != (info.title, info.title_set_by_user):
        batch.titles[sid] = (final.title, final.by_user)
        report.received_sessions.add(sid)
    if final.archived != info.archived:
        batch.archived[sid] = final.archived
        report.received_sessions.add(sid)
    if final.status != info.status:
        batch.statuses[sid] = final.status
        report.received_sessions.add(sid)
