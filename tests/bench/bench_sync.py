"""Folder sync benchmarks, each beside a floor measured in the same run.

Run: ``python tests/bench/bench_sync.py [--sessions N] [--entries M]``
(default 1,000 sessions of 200 entries, as issue 34 asks). Ratios matter,
not absolute times (shared, noisy machines).

- first: the first sync of a database into an empty folder.
- no_change: a sync with nothing new (goal < 0.5 s at the default size).
- one_exchange: a sync after one new question and answer (goal < 0.2 s).
- from_other: a sync that takes one new question and answer another device
  wrote into a folder holding the whole of its sessions.
Floor: a bare sqlite3 ``SELECT session_id, id FROM entries`` of the same
database, the least any sync must read to know what it holds.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.sessions.entries import Entry  # noqa: E402
from core.sessions.ids import now_iso, uuid7  # noqa: E402
from core.sessions.messages import user_text  # noqa: E402
from core.sessions.persistence import SessionInfo  # noqa: E402
from core.sync.engine import sync_folder  # noqa: E402
from storage import SqliteStore  # noqa: E402


async def fill(store: SqliteStore, sessions: int, entries: int) -> SessionInfo:
    info = None
    for number in range(sessions):
        now = now_iso()
        info = SessionInfo(id=uuid7(), title=f"session {number}", created_at=now, updated_at=now)
        chain: list[Entry] = []
        for depth in range(entries):
            parent = chain[-1].id if chain else None
            chain.append(Entry.new(info.id, parent, user_text(f"message {depth} " * 30)))
        info = SessionInfo(**{**info.to_dict(), "leaf_id": chain[-1].id})
        await store.create_session(info, chain)
    assert info is not None
    return info


def floor_ms(db: Path) -> float:
    with sqlite3.connect(db) as conn:
        started = time.perf_counter()
        conn.execute("SELECT session_id, id FROM entries").fetchall()
        return (time.perf_counter() - started) * 1000


async def timed(store: SqliteStore, folder: Path, device: str = "bench") -> float:
    started = time.perf_counter()
    await sync_folder(store, folder, device)
    return (time.perf_counter() - started) * 1000


async def exchange(store: SqliteStore, session: SessionInfo) -> None:
    """One more question and answer at the end of ``session``."""
    info = await store.get_session(session.id)
    assert info is not None
    question = Entry.new(info.id, info.leaf_id, user_text("one more question"))
    answer = Entry.new(info.id, question.id, user_text("one more answer"))
    await store.append(info.id, [question, answer], answer.id)


async def from_other(tmp: Path, folder: Path, session: SessionInfo) -> float:
    """The time another device's sync takes to receive one new exchange from
    the bench device, once it holds everything else."""
    other = await SqliteStore.open(tmp / "other.db")
    try:
        await timed(other, folder, "other")
        await timed(other, folder, "other")
        bench = await SqliteStore.open(tmp / "bench.db")
        try:
            await exchange(bench, session)
            await timed(bench, folder)
        finally:
            await bench.close()
        return await timed(other, folder, "other")
    finally:
        await other.close()


async def run(sessions: int, entries: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db, folder = Path(tmp) / "bench.db", Path(tmp) / "folder"
        folder.mkdir()
        store = await SqliteStore.open(db)
        try:
            last = await fill(store, sessions, entries)
            floor = floor_ms(db)
            first = await timed(store, folder)
            unchanged = await timed(store, folder)
            await exchange(store, last)
            one_exchange = await timed(store, folder)
        finally:
            await store.close()
        received = await from_other(Path(tmp), folder, last)
    print(f"{sessions} sessions x {entries} entries; floor (ids read bare) {floor:.1f} ms")
    for name, value, goal in (
        ("first", first, None),
        ("no_change", unchanged, 500),
        ("one_exchange", one_exchange, 200),
        ("from_other", received, 200),
    ):
        target = f"  goal < {goal} ms at 1,000 x 200" if goal else ""
        print(f"{name:>13}: {value:9.1f} ms  = {value / floor:7.1f} x floor{target}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(run(args.sessions, args.entries))


if __name__ == "__main__":
    main()
