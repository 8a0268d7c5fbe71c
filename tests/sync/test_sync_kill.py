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
from pathlib import Path

from core.sessions.entries import Entry
from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import user_text
from core.sessions.persistence import SessionInfo
from core.sync.engine import read_folder
from storage.store import SqliteStore
from tests.integration.cli import tangents_command
from tests.sync.machines import Machine

SESSIONS, DEPTH, KILLS = 120, 25, 12


async def fill(db: Path) -> int:
    """Sessions written straight into a real database: enough for a sync to take a while."""
    store = await SqliteStore.open(db)
    try:
        for number in range(SESSIONS):
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
    return SESSIONS * DEPTH


def killed_sync(machine: Machine, delay: float) -> bool:
    """Run a sync and SIGKILL it after ``delay`` seconds; whether it was still running."""
    process = subprocess.Popen(
        [*tangents_command(), "sync", "--folder", str(machine.folder)],
        env={**os.environ, "TANGENTS_HOME": str(machine.home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(delay)  # a random moment to kill at, not a wait for anything
    running = process.poll() is None
    if running:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    return running


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
    # How long a whole first sync takes here, on a copy: the kills land within it.
    probe = Machine.make(tmp_path, "probe", tmp_path / "probe-folder")
    shutil.copy(a.db, probe.db)
    started = time.monotonic()
    probe.sync()
    full = time.monotonic() - started
    rng = random.Random(34)
    landed = 0
    for _ in range(KILLS):
        machine = rng.choice((a, b))
        landed += killed_sync(machine, rng.uniform(0.05, full * 1.5))
        assert integrity(machine.db) == "ok"
        read_folder(folder, "reader")  # every journal still reads
    assert landed, "no kill landed during a sync"
    for machine in (b, a, b):
        machine.sync()
    assert integrity(a.db) == integrity(b.db) == "ok"
    assert entry_count(a.db) == entry_count(b.db) == total
    assert a.session_ids() == b.session_ids()
