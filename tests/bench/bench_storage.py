"""Storage benchmarks, each beside a floor measured in the same run.

Run: ``python tests/bench/bench_storage.py``. Ratios matter, not absolute
times (shared, noisy machines).

- path_10k: ``store.path(leaf)`` of a 10,000-entry linear session, decoded
  into entries, vs a bare sqlite3 recursive SELECT of the same rows.
- append_1k: one durable ~1 KB ``store.append`` vs a bare sqlite3
  insert + commit of the same bytes (WAL, synchronous=FULL, same directory).
- open_latest: ``latest_session()`` + ``path(leaf)`` with 1,000 sessions in
  the database vs with 10.
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.sessions.content import TextContent  # noqa: E402
from core.sessions.entries import Entry  # noqa: E402
from core.sessions.ids import now_iso, uuid7  # noqa: E402
from core.sessions.messages import Message, Usage, user_text  # noqa: E402
from core.sessions.persistence import SessionInfo  # noqa: E402
from storage import SqliteStore  # noqa: E402
from storage.rows import entry_row  # noqa: E402


@dataclass(frozen=True)
class Result:
    name: str
    value_ms: float
    floor_ms: float
    goal: float

    @property
    def ratio(self) -> float:
        return self.value_ms / self.floor_ms

    def line(self) -> str:
        return (
            f"{self.name}: {self.value_ms:.2f} ms  floor {self.floor_ms:.2f} ms  "
            f"ratio {self.ratio:.2f}x (goal < {self.goal:g}x)"
        )


def _message(i: int) -> Message:
    if i % 2 == 0:
        return user_text(f"question {i}: " + "what about the tree and its branches? " * 8)
    return Message(
        role="assistant",
        content=(TextContent(f"answer {i}: " + "the branch keeps its own history. " * 20),),
        model="anthropic/claude-sonnet-4-5",
        provider="anthropic",
        usage=Usage(input_tokens=1200, output_tokens=300, input_cost=0.0036, output_cost=0.0045),
        stop_reason="stop",
    )


def _kilobyte_message(i: int) -> Message:
    return user_text(f"message {i}: " + "a user message of about one kilobyte. " * 26)


def _chain(session_id: str, count: int, make: Callable[[int], Message] = _message) -> list[Entry]:
    entries: list[Entry] = []
    for i in range(count):
        entries.append(Entry.new(session_id, entries[-1].id if entries else None, make(i)))
    return entries


async def _new_session(store: SqliteStore, count: int) -> str:
    """A session holding a chain of ``count`` entries; returns its leaf."""
    session_id, now = uuid7(), now_iso()
    entries = _chain(session_id, count)
    await store.create_session(
        SessionInfo(session_id, "bench", now, now, leaf_id=entries[-1].id), entries
    )
    return entries[-1].id


Op = Callable[[], Awaitable[object]]


def _sync(fn: Callable[[], object]) -> Op:
    async def run() -> object:
        return fn()

    return run


async def _interleaved(
    value: Op, floor: Op, runs: int, collect: bool = False
) -> tuple[float, float]:
    """Median times in ms of ``value`` and ``floor``, run alternately so that
    both see the same machine and disk conditions. With ``collect``, each
    large result is freed and garbage collected untimed, so neither side pays
    for the other's garbage."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for op, samples in zip((value, floor), times, strict=False):
            start = time.perf_counter()
            result = await op()
            samples.append(time.perf_counter() - start)
            del result
            if collect:
                gc.collect()
    return statistics.median(times[0]) * 1000, statistics.median(times[1]) * 1000


_BARE_PATH = """
    WITH RECURSIVE up (id, parent_id, session_id, type, created_at, payload) AS (
        SELECT id, parent_id, session_id, type, created_at, payload FROM entries WHERE id = ?
        UNION ALL
        SELECT e.id, e.parent_id, e.session_id, e.type, e.created_at, e.payload
        FROM entries AS e JOIN up ON e.id = up.parent_id
    ) SELECT * FROM up"""


async def bench_path(tmp: Path) -> Result:
    db = tmp / "path.db"
    store = await SqliteStore.open(db)
    bare = sqlite3.connect(db)
    try:
        leaf = await _new_session(store, 10_000)
        assert len(await store.path(leaf)) == 10_000
        value, floor = await _interleaved(
            lambda: store.path(leaf),
            _sync(lambda: bare.execute(_BARE_PATH, (leaf,)).fetchall()),
            runs=9,
            collect=True,
        )
    finally:
        bare.close()
        await store.close()
    return Result("path_10k", value, floor, goal=3)


async def bench_append(tmp: Path, runs: int = 300) -> Result:
    store = await SqliteStore.open(tmp / "append.db")
    bare = sqlite3.connect(tmp / "bare.db", isolation_level=None)
    bare.execute("PRAGMA journal_mode = WAL")
    bare.execute("PRAGMA synchronous = FULL")
    bare.execute("CREATE TABLE t (id TEXT PRIMARY KEY, payload TEXT NOT NULL)")
    try:
        session_id, now = uuid7(), now_iso()
        await store.create_session(SessionInfo(session_id, None, now, now))
        entries = iter(_chain(session_id, runs, _kilobyte_message))
        rows = iter([(e.id, entry_row(e)[5]) for e in _chain(session_id, runs, _kilobyte_message)])

        async def append() -> None:
            entry = next(entries)
            await store.append(session_id, [entry], entry.id)

        def insert() -> None:
            bare.execute("BEGIN IMMEDIATE")
            bare.execute("INSERT INTO t VALUES (?, ?)", next(rows))
            bare.execute("COMMIT")

        value, floor = await _interleaved(append, _sync(insert), runs)
    finally:
        bare.close()
        await store.close()
    return Result("append_1k", value, floor, goal=2)


async def _open_latest(store: SqliteStore) -> None:
    info = await store.latest_session()
    assert info is not None and info.leaf_id is not None
    await store.path(info.leaf_id)


async def bench_open_latest(tmp: Path) -> Result:
    """The floor is the same operation on a database with 10 sessions."""
    many = await SqliteStore.open(tmp / "many.db")
    few = await SqliteStore.open(tmp / "few.db")
    try:
        for store, count in ((many, 1000), (few, 10)):
            for _ in range(count):
                await _new_session(store, 20)
        value, floor = await _interleaved(
            lambda: _open_latest(many), lambda: _open_latest(few), runs=200
        )
    finally:
        await few.close()
        await many.close()
    return Result("open_latest_1000_vs_10", value, floor, goal=1.5)


async def _run_all() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="tangents-bench-") as name:
        tmp = Path(name)
        return [await bench_path(tmp), await bench_append(tmp), await bench_open_latest(tmp)]


def main() -> list[Result]:
    """Run every storage benchmark, print one line each, return the results."""
    results = asyncio.run(_run_all())
    for result in results:
        print(result.line())
    return results


if __name__ == "__main__":
    main()
