"""Opening a file: creation, permissions, pragmas, and refusing files this
version cannot use while leaving them byte-for-byte untouched."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
from pathlib import Path

import pytest

from storage import SqliteStore, StorageError
from storage.migrations import MIGRATIONS, SCHEMA_VERSION
from tests.storage.conftest import add_chain, digest, new_session, pragma


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_new_database_is_migrated_with_the_connection_configured(
    store: SqliteStore, db_path: Path
) -> None:
    assert await pragma(store, "journal_mode") == "wal"
    assert await pragma(store, "foreign_keys") == 1
    assert await pragma(store, "synchronous") == 2  # FULL
    assert await pragma(store, "busy_timeout") == 10_000
    assert await pragma(store, "user_version") == SCHEMA_VERSION == len(MIGRATIONS)
    with sqlite3.connect(db_path) as conn:
        recorded = [row[0] for row in conn.execute("SELECT name FROM migrations ORDER BY rowid")]
        applied_at = conn.execute("SELECT applied_at FROM migrations").fetchone()[0]
    assert recorded == [name for name, _ in MIGRATIONS]
    assert applied_at.endswith("Z")


async def test_reopening_keeps_data_and_applies_nothing_twice(db_path: Path) -> None:
    store = await SqliteStore.open(db_path)
    session_id = await new_session(store, "kept")
    await add_chain(store, session_id, ["hello", "hi"])
    await store.close()
    for _ in range(2):
        store = await SqliteStore.open(db_path)
        assert (await store.get_session(session_id)).title == "kept"  # type: ignore[union-attr]
        assert len(await store.entries(session_id)) == 2
        await store.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)


async def test_directories_and_files_are_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "made" / "by" / "us" / "tangents.db"
    store = await SqliteStore.open(db)
    try:
        await add_chain(store, await new_session(store), ["hi"])
        for directory in (tmp_path / "made", tmp_path / "made" / "by", db.parent):
            assert mode(directory) == 0o700, directory
        for suffix in ("", "-wal", "-shm"):
            assert mode(Path(f"{db}{suffix}")) == 0o600, suffix
    finally:
        await store.close()


async def test_existing_directory_keeps_its_mode(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    store = await SqliteStore.open(tmp_path / "tangents.db")
    await store.close()
    assert mode(tmp_path) == 0o755


async def test_an_empty_file_becomes_a_database(db_path: Path) -> None:
    db_path.touch()
    store = await SqliteStore.open(db_path)
    await store.close()
    assert db_path.read_bytes().startswith(b"SQLite format 3\x00")


async def _refused(path: Path) -> str:
    before = digest(path)
    with pytest.raises(StorageError) as caught:
        await SqliteStore.open(path)
    assert digest(path) == before
    message = str(caught.value)
    assert str(path) in message and "\n" not in message
    return message


async def test_a_file_that_is_not_sqlite_is_refused_untouched(db_path: Path) -> None:
    db_path.write_text("my notes, not a database\n" * 200)
    assert "not an SQLite database" in await _refused(db_path)
    assert not Path(f"{db_path}-wal").exists()


async def _made_database(db_path: Path, sessions: int = 20) -> None:
    store = await SqliteStore.open(db_path)
    for i in range(sessions):
        await add_chain(store, await new_session(store), [f"message {i} " * 100] * 4)
    await store.close()


@pytest.mark.parametrize("keep", [1 / 2, 1 / 10, 50 / 4096])
async def test_a_truncated_database_is_refused_untouched(db_path: Path, keep: float) -> None:
    await _made_database(db_path)
    data = db_path.read_bytes()
    db_path.write_bytes(data[: int(len(data) * keep)])
    assert "truncated" in await _refused(db_path)


async def test_a_corrupt_database_is_refused_untouched(db_path: Path) -> None:
    await _made_database(db_path)
    data = bytearray(db_path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page
    db_path.write_bytes(bytes(data))
    await _refused(db_path)


async def test_a_newer_schema_version_is_refused_untouched(db_path: Path) -> None:
    await _made_database(db_path, sessions=1)
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    assert "newer version of Tangents" in await _refused(db_path)


async def test_an_unknown_migration_is_refused_untouched(db_path: Path) -> None:
    await _made_database(db_path, sessions=1)
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute(
            "INSERT INTO migrations VALUES ('m999_from_the_future', '2030-01-01T00:00:00Z')"
        )
    conn.close()
    assert "newer version of Tangents" in await _refused(db_path)


async def test_another_programs_database_is_refused_untouched(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.close()
    assert "not one of Tangents" in await _refused(db_path)


async def test_a_directory_in_place_of_the_file_is_a_storage_error(db_path: Path) -> None:
    db_path.mkdir()
    with pytest.raises(StorageError, match="tangents.db"):
        await SqliteStore.open(db_path)


async def test_concurrent_first_opens_of_a_new_file_both_succeed(db_path: Path) -> None:
    stores = await asyncio.gather(*(SqliteStore.open(db_path) for _ in range(3)))
    try:
        for store in stores:
            await new_session(store)
        assert len(await stores[0].list_sessions()) == 3
    finally:
        for store in stores:
            await store.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(MIGRATIONS)


async def test_damage_found_after_opening_is_a_storage_error(db_path: Path) -> None:
    """Pages damaged past the schema surface as StorageError on first use."""
    store = await SqliteStore.open(db_path)
    session_id = await new_session(store)
    await add_chain(store, session_id, [f"message {i} " * 200 for i in range(40)])
    await store.close()
    data = bytearray(db_path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for start in range(len(data) // 2 // page * page, len(data), page):
        data[start : start + page] = b"\xa5" * page
    db_path.write_bytes(bytes(data))
    with pytest.raises(StorageError, match="tangents.db"):
        store = await SqliteStore.open(db_path)
        try:
            await store.entries(session_id)
            await store.search("message")
        finally:
            await store.close()
