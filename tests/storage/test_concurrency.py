"""Two writers on one file lose nothing; a cancelled write is all or nothing
and leaves no transaction open."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.sessions.entries import Entry
from storage import SqliteStore
from tests.storage.conftest import add_chain, chain, message, new_session

ROOT = Path(__file__).resolve().parents[2]


async def test_two_stores_appending_at_once_lose_nothing(db_path: Path) -> None:
    first, second = await SqliteStore.open(db_path), await SqliteStore.open(db_path)
    try:
        shared = await new_session(first)

        async def writer(store: SqliteStore, name: str) -> list[str]:
            own = await new_session(store)
            ids, parent = [], None
            for i in range(60):
                entry = Entry.new(shared, parent, message(f"{name} {i}"))
                await store.append(shared, [entry], entry.id)
                await store.append(own, chain(own, [f"{name} own {i}"]), None)
                ids.append(entry.id)
                parent = entry.id
            return ids

        ids_a, ids_b = await asyncio.gather(writer(first, "a"), writer(second, "b"))
        saved = {e.id for e in await first.entries(shared)}
        assert saved == set(ids_a) | set(ids_b)
        summaries = await second.list_sessions()
        assert sorted(s.message_count for s in summaries) == [60, 60, 120]
        assert next(s for s in summaries if s.info.id == shared).branch_count == 2
    finally:
        await first.close()
        await second.close()


WRITER = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from core.sessions.entries import Entry
    from core.sessions.ids import now_iso, uuid7
    from core.sessions.messages import user_text
    from core.sessions.persistence import SessionInfo
    from storage import SqliteStore

    async def main(db, go, name, count):
        store = await SqliteStore.open(db)
        while not Path(go).exists():
            time.sleep(0.001)
        session_id = uuid7()
        await store.create_session(SessionInfo(session_id, name, now_iso(), now_iso()))
        parent = None
        for i in range(count):
            entry = Entry.new(session_id, parent, user_text(f"{name} {i}"))
            await store.append(session_id, [entry], entry.id)
            parent = entry.id
        await store.close()
        print(session_id)

    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
    """
)


def test_two_processes_appending_at_once_lose_nothing(db_path: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db_path), str(go), name, "150"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("left", "right")
    ]
    go.touch()
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_out, err) in zip(procs, outputs, strict=False):
        assert proc.returncode == 0, err
    with sqlite3.connect(db_path) as conn:
        for out, _ in outputs:
            count = conn.execute(
                "SELECT count(*) FROM entries WHERE session_id = ?", (out.strip(),)
            ).fetchone()[0]
            assert count == 150
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def no_transaction_open(db_path: Path) -> None:
    """Another connection can take the write lock at once."""
    conn = sqlite3.connect(db_path, timeout=0, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("ROLLBACK")
    conn.close()


@pytest.mark.parametrize("delay", [0, 0.001, 0.01])
async def test_a_cancelled_append_is_all_or_nothing(
    store: SqliteStore, db_path: Path, delay: float
) -> None:
    """Cancelled after it was queued, before or while its transaction runs."""
    session_id = await new_session(store)
    batch = chain(session_id, [f"bulk message {i} " * 20 for i in range(3000)])
    task = asyncio.create_task(store.append(session_id, batch, batch[-1].id, title="bulk"))
    await asyncio.sleep(delay)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    other = await new_session(store)  # queued behind the cancelled write: it has finished
    await add_chain(store, other, ["still writing"])
    assert not store._conn.in_transaction
    no_transaction_open(db_path)

    saved = await store.entries(session_id)
    info = await store.get_session(session_id)
    assert info is not None
    if saved:
        assert saved == batch and (info.leaf_id, info.title) == (batch[-1].id, "bulk")
        assert len(await store.search("bulk")) == 50
    else:
        assert (info.leaf_id, info.title) == (None, None)
        assert await store.search("bulk") == []
    [summary] = [s for s in await store.list_sessions() if s.info.id == session_id]
    assert summary.message_count == len(saved)


async def test_a_write_cancelled_before_it_ran_saves_nothing(store: SqliteStore) -> None:
    session_id = await new_session(store)
    entry = Entry.new(session_id, None, message("never"))
    task = asyncio.create_task(store.append(session_id, [entry], entry.id))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await store.entries(session_id) == []
