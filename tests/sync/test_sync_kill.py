"""A sync killed (SIGKILL) at random points leaves the database and the folder
usable, and the next sync completes with nothing lost."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from core.sessions.entries import Entry
from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import user_text
from core.sessions.persistence import SessionInfo
from core.sync.reading import read_folder
from storage.store import SqliteStore
from tests.integration.cli import tangents_command
from tests.sync.machines import Machine

SESSIONS, SENDER_SESSIONS, DEPTH, KILLS = 120, 30, 25, 30


async def fill(db: Path, sessions: int = SESSIONS) -> int:
    """Sessions written straight into a real database: enough for a sync to take a while."""
    store = await SqliteStore.open(db)
    try:
        for number in range(sessions):
            now = now_iso()
            info = SessionInfo(
                id=uuid7(), title=f"session {number}", created_at=now, updated_at=now
            )
            entries: list[Entry] = []
            for depth in range(DEPTH):
                parent = entries[-1].id if entries else None
                entries.append(Entry.new(info.id, parent, user_text(f"s{number} m{depth} " * 20)))
            await store.create_session(
                SessionInfo(**{**info.to_dict(), "leaf_id": entries[-1].id}), entries
            )
    finally:
        await store.close()
    return sessions * DEPTH


def killed_sync(machine: Machine, moment: Callable[[], bool]) -> bool:
    """Run a sync and SIGKILL it once ``moment()`` holds; whether it was still running."""
    process = subprocess.Popen(
        [*tangents_command(), "sync", "--folder", str(machine.folder)],
        env={**os.environ, "TANGENTS_HOME": str(machine.home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    while process.poll() is None and not moment():
        time.sleep(0.001)  # polling the condition, not waiting a fixed time
    running = process.poll() is None
    if running:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return running


def journal_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.jsonl"))


def journals_grew(folder: Path, by: int) -> Callable[[], bool]:
    """When the folder's journals have grown by ``by`` bytes."""
    target = journal_bytes(folder) + by
    return lambda: journal_bytes(folder) >= target


def database_written(db: Path) -> Callable[[], bool]:
    """When the database's write-ahead log changes: the sync is applying."""
    wal = db.with_name(db.name + "-wal")

    def state() -> tuple[int, int] | None:
        try:
            found = wal.stat()
        except OSError:
            return None
        return found.st_size, found.st_mtime_ns

    before = state()
    return lambda: state() != before


def integrity(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def entry_count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])


def test_killed_syncs_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    a, b = Machine.make(tmp_path, "a", folder), Machine.make(tmp_path, "b", folder)
    a.ask("one exchange on a")  # the demo model, offline: a model change, a question, a reply
    b.ask("one exchange on b")
    total = asyncio.run(fill(a.db)) + 2 * 3
    # How much a whole first sync writes, on a copy: journal kills land within it.
    probe = Machine.make(tmp_path, "probe", tmp_path / "probe-folder")
    shutil.copy(a.db, probe.db)
    probe.sync()
    written = journal_bytes(probe.folder)
    rng = random.Random(34)
    machines = [a, b]
    # A machine with sessions of its own to send, and one receiving everything:
    # each replaced by a new one when a sync of it completes.
    sender: Machine | None = a
    receiver: Machine | None = None
    landed = rounds = 0
    while landed < KILLS:
        rounds += 1
        assert rounds <= 3 * KILLS, f"only {landed} of {rounds} kills landed during a sync"
        kind = rng.choice(("sending", "sending", "receiving", "receiving", "starting"))
        if kind == "sending":
            if sender is None:
                sender = Machine.make(tmp_path, f"m{rounds}", folder)
                total += asyncio.run(fill(sender.db, SENDER_SESSIONS))
                machines.append(sender)
            machine = sender
            share = SENDER_SESSIONS / SESSIONS if machine is not a else 1
            moment = journals_grew(folder, rng.randint(1, int(written * share)))
        else:
            if receiver is None:
                receiver = Machine.make(tmp_path, f"m{rounds}", folder)
                machines.append(receiver)
            machine = receiver
            moment = database_written(machine.db) if kind == "receiving" else lambda: True
        if killed_sync(machine, moment):
            landed += 1
        elif machine is sender:
            sender = None
        elif machine is receiver:
            receiver = None
        if machine.db.exists():
            assert integrity(machine.db) == "ok"
        read_folder(folder, "reader")  # every journal still reads
    for machine in (*machines, *machines):
        machine.sync()
    for machine in machines:
        assert integrity(machine.db) == "ok"
        assert entry_count(machine.db) == total
        assert machine.session_ids() == a.session_ids()
