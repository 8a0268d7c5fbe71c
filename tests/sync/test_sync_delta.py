"""Another device's journal that grew is read from where the last sync
stopped, not whole (issue 34: incremental and fast); a journal rewritten
under the remembered end is read whole again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.sessions.entries import Entry
from core.sessions.messages import user_text
from core.sessions.persistence import SessionInfo
from core.sync.engine import sync_folder
from tests.sync.test_sync_incremental import new_session, opened, sync


async def continue_on(db: Path, info: SessionInfo, *texts: str) -> list[Entry]:
    async with opened(db) as store:
        current = await store.get_session(info.id)
        assert current is not None
        parent, added = current.leaf_id, []
        for text in texts:
            added.append(Entry.new(info.id, parent, user_text(text)))
            parent = added[-1].id
        await store.append(info.id, added, parent)
        return added


def spoil_start(journal: Path) -> None:
    """Damage the journal's first line, keeping its size and its last kilobytes:
    a sync that read the journal whole again would skip that line."""
    data = bytearray(journal.read_bytes())
    data[10:20] = b"#" * 10
    journal.write_bytes(bytes(data))


def test_only_what_another_device_appended_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    a_db, b_db = tmp_path / "a.db", tmp_path / "b.db"

    async def scenario() -> None:
        async with opened(b_db) as store:
            info = await new_session(store, "from b", "long " * 2000)
        await sync(b_db, folder, "b")
        await sync(a_db, folder, "a")
        added = await continue_on(b_db, info, "a question", "an answer")
        await sync(b_db, folder, "b")
        spoil_start(folder / "tangents" / "b" / "entries.jsonl")
        report = await sync(a_db, folder, "a")
        assert report.skipped == 0
        assert report.received_entries == 2 and report.sent_entries == 0
        async with opened(a_db) as store:
            assert [e.id for e in await store.path(added[-1].id)][-2:] == [e.id for e in added]
            current = await store.get_session(info.id)
            assert current is not None and current.leaf_id == added[-1].id

    asyncio.run(scenario())


def test_a_half_copied_last_line_is_taken_when_the_rest_arrives(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    a_db, b_db = tmp_path / "a.db", tmp_path / "b.db"
    journal = folder / "tangents" / "b" / "entries.jsonl"

    async def scenario() -> None:
        async with opened(b_db) as store:
            info = await new_session(store, "from b", "long " * 2000)
        await sync(b_db, folder, "b")
        await sync(a_db, folder, "a")
        added = await continue_on(b_db, info, "a question", "an answer")
        await sync(b_db, folder, "b")
        spoil_start(journal)
        whole = journal.read_bytes()
        journal.write_bytes(whole[:-20])  # the sync engine is mid-copy
        first = await sync(a_db, folder, "a")
        assert (first.received_entries, first.skipped) == (1, 0)
        journal.write_bytes(whole)
        second = await sync(a_db, folder, "a")
        assert (second.received_entries, second.skipped) == (1, 0)
        async with opened(a_db) as store:
            assert [e.id for e in await store.path(added[-1].id)][-2:] == [e.id for e in added]

    asyncio.run(scenario())


def test_a_journal_rewritten_under_the_remembered_end_is_read_whole(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    a_db, b_db = tmp_path / "a.db", tmp_path / "b.db"
    journal = folder / "tangents" / "b" / "entries.jsonl"

    async def scenario() -> None:
        async with opened(b_db) as store:
            info = await new_session(store, "first", "long " * 2000)
        await sync(b_db, folder, "b")
        await sync(a_db, folder, "a")
        old = journal.read_bytes()
        added = await continue_on(b_db, info, "a question", "an answer")
        await sync(b_db, folder, "b")
        # The same lines in another order: longer than what a read, but what
        # a remembered is no longer where it was.
        journal.write_bytes(journal.read_bytes()[len(old) :] + old)
        report = await sync(a_db, folder, "a")
        assert report.received_entries == 2
        async with opened(a_db) as store:
            current = await store.get_session(info.id)
            assert current is not None and current.leaf_id == added[-1].id

    asyncio.run(scenario())


def test_an_older_write_copied_in_late_loses_to_a_newer_one(tmp_path: Path) -> None:
    """Each device syncs with its own replica of the folder, as under Syncthing:
    a title b set before a's later one arrives after a's sync, and loses."""
    a_dir, b_dir = tmp_path / "a-folder", tmp_path / "b-folder"
    a_dir.mkdir()
    a_db, b_db = tmp_path / "a.db", tmp_path / "b.db"

    async def run(db: Path, folder: Path, device: str, now: int) -> None:
        async with opened(db) as store:
            await sync_folder(store, folder, device, now=lambda: now)

    async def scenario() -> None:
        async with opened(a_db) as store:
            info = await new_session(store, "shared")
        await run(a_db, a_dir, "a", 1_000)
        carry(a_dir, b_dir, "a")
        await run(b_db, b_dir, "b", 1_100)
        carry(b_dir, a_dir, "b")
        await run(a_db, a_dir, "a", 1_200)
        async with opened(b_db) as store:
            await store.set_title(info.id, "older, from b")
        await run(b_db, b_dir, "b", 1_500)
        async with opened(a_db) as store:
            await store.set_title(info.id, "newer, from a")
        await run(a_db, a_dir, "a", 2_000)
        carry(b_dir, a_dir, "b")
        carry(a_dir, b_dir, "a")
        await run(a_db, a_dir, "a", 2_100)
        await run(b_db, b_dir, "b", 2_100)
        for db in (a_db, b_db):
            async with opened(db) as store:
                current = await store.get_session(info.id)
                assert current is not None and current.title == "newer, from a"

    asyncio.run(scenario())


def carry(source: Path, target: Path, device: str) -> None:
    """What a sync engine does: the files ``device`` wrote in its replica
    ``source`` copied into the replica ``target``."""
    for path in (source / "tangents" / device).rglob("*"):
        if path.is_file():
            copied = target / path.relative_to(source)
            copied.parent.mkdir(parents=True, exist_ok=True)
            copied.write_bytes(path.read_bytes())
