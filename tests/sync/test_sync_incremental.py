"""A sync over a folder unchanged since the last reads no journal and sends
only what was added here since (issue 34: incremental and fast)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from core.sessions.entries import Entry
from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import user_text
from core.sessions.persistence import SessionInfo
from core.sync.engine import SyncReport, sync_folder
from storage.store import SqliteStore


@asynccontextmanager
async def opened(db: Path) -> AsyncIterator[SqliteStore]:
    store = await SqliteStore.open(db)
    try:
        yield store
    finally:
        await store.close()


async def new_session(store: SqliteStore, *texts: str) -> SessionInfo:
    now = now_iso()
    info = SessionInfo(id=uuid7(), title="t", created_at=now, updated_at=now)
    chain: list[Entry] = []
    for text in texts:
        chain.append(Entry.new(info.id, chain[-1].id if chain else None, user_text(text)))
    info = SessionInfo(**{**info.to_dict(), "leaf_id": chain[-1].id})
    await store.create_session(info, chain)
    return info


async def sync(db: Path, folder: Path, device: str) -> SyncReport:
    async with opened(db) as store:
        return await sync_folder(store, folder, device)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_an_unchanged_folder_is_not_read_again(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()

    async def scenario() -> None:
        async with opened(tmp_path / "b.db") as store:
            await new_session(store, "from b", "more from b", "long " * 2000)
        await sync(tmp_path / "b.db", folder, "b")
        assert (await sync(tmp_path / "a.db", folder, "a")).received_entries == 3
        await sync(tmp_path / "a.db", folder, "a")
        # Spoil the start of b's journal, keeping its size and its last
        # kilobytes: a sync that read it again would skip the damaged line.
        journal = folder / "tangents" / "b" / "entries.jsonl"
        data = bytearray(journal.read_bytes())
        data[10:20] = b"#" * 10
        journal.write_bytes(bytes(data))
        before = folder_bytes(folder)
        report = await sync(tmp_path / "a.db", folder, "a")
        assert report.skipped == 0 and report.received_entries == report.sent_entries == 0
        assert folder_bytes(folder) == before

    asyncio.run(scenario())


def test_what_is_added_or_changed_here_is_sent_over_an_unchanged_folder(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    a_db, b_db = tmp_path / "a.db", tmp_path / "b.db"

    async def scenario() -> None:
        async with opened(a_db) as store:
            kept = await new_session(store, "kept", "kept too")
            doomed = await new_session(store, "doomed")
        await sync(a_db, folder, "a")
        await sync(b_db, folder, "b")
        await sync(a_db, folder, "a")
        async with opened(a_db) as store:
            assert kept.leaf_id is not None
            answer = Entry.new(kept.id, kept.leaf_id, user_text("one more"))
            await store.append(kept.id, [answer], answer.id)
            await store.set_title(kept.id, "renamed on a")
            await store.set_label(kept.id, answer.id, "here")
            await store.delete_session(doomed.id)
            fresh = await new_session(store, "new on a")
        report = await sync(a_db, folder, "a")
        assert report.sent_entries == 2 and report.skipped == 0
        await sync(b_db, folder, "b")
        async with opened(b_db) as store:
            assert await store.get_session(doomed.id) is None
            info = await store.get_session(kept.id)
            assert info is not None and info.title == "renamed on a"
            assert [e.id for e in await store.path(answer.id)][-1] == answer.id
            assert await store.labels(kept.id) == {answer.id: "here"}
            assert await store.get_session(fresh.id) is not None
        before = folder_bytes(folder)
        for db, name in ((a_db, "a"), (b_db, "b"), (a_db, "a")):
            report = await sync(db, folder, name)
            assert report.sent_entries == report.received_entries == 0
        assert folder_bytes(folder) == before

    asyncio.run(scenario())


def test_a_journal_rewritten_shorter_is_read_again(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()

    async def scenario() -> None:
        async with opened(tmp_path / "b.db") as store:
            first = await new_session(store, "first")
        await sync(tmp_path / "b.db", folder, "b")
        await sync(tmp_path / "a.db", folder, "a")
        journal = folder / "tangents" / "b" / "entries.jsonl"
        async with opened(tmp_path / "b.db") as store:
            second = await new_session(store, "second")
        await sync(tmp_path / "b.db", folder, "b")
        # A sync engine replaced the journal by an older copy with one new line.
        lines = journal.read_bytes().splitlines(keepends=True)
        journal.write_bytes(b"".join(lines[:2] + lines[-2:]))
        await sync(tmp_path / "a.db", folder, "a")
        async with opened(tmp_path / "a.db") as store:
            assert await store.get_session(first.id) is not None
            assert await store.get_session(second.id) is not None

    asyncio.run(scenario())
