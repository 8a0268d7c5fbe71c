"""Migrations: from an empty file and from every earlier schema, each step
recorded; the list itself stays append-only in form."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from storage import SqliteStore
from storage.migrations import MIGRATIONS, SCHEMA_VERSION


def schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE name != 'migrations' ORDER BY name"
        ).fetchall()


def test_migrations_are_named_in_order_and_unique() -> None:
    names = [name for name, _ in MIGRATIONS]
    assert len(set(names)) == len(names) == SCHEMA_VERSION
    for name in names:
        assert re.fullmatch(r"m[0-9]{3}_[a-z0-9_]+", name), name
    # Numbers only grow: a number is taken when a branch starts the migration
    # (m008 on another branch while m009 was written), so one may be missing.
    numbers = [int(name[1:4]) for name in names]
    assert numbers == sorted(set(numbers)) and numbers[0] == 1
    assert [fn.__name__ for _, fn in MIGRATIONS] == names


@pytest.mark.parametrize("applied", range(len(MIGRATIONS)))
async def test_upgrade_from_every_earlier_schema(tmp_path: Path, applied: int) -> None:
    """A database left by an older version (its first ``applied`` migrations)
    ends with the same schema as a new one, every migration recorded once."""
    fresh = tmp_path / "fresh.db"
    await (await SqliteStore.open(fresh)).close()

    old = tmp_path / "old.db"
    conn = sqlite3.connect(old, isolation_level=None)
    if applied:
        conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        for name, fn in MIGRATIONS[:applied]:
            fn(conn)
            conn.execute("INSERT INTO migrations VALUES (?, '2020-01-01T00:00:00Z')", (name,))
        conn.execute(f"PRAGMA user_version = {applied}")
    conn.close()

    store = await SqliteStore.open(old)
    await store.close()
    assert schema(old) == schema(fresh)
    with sqlite3.connect(old) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM migrations ORDER BY rowid")]
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert names == [name for name, _ in MIGRATIONS]


async def test_a_new_database_passes_integrity_checks(db_path: Path) -> None:
    await (await SqliteStore.open(db_path)).close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


async def test_a_version_one_database_gains_title_search_and_image_references(
    tmp_path: Path,
) -> None:
    """A database written before the picker (schema 1, with sessions, entries
    and an image) is upgraded: its titles are searchable, its images known."""
    old = tmp_path / "v1.db"
    conn = sqlite3.connect(old, isolation_level=None)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    name, m001 = MIGRATIONS[0]
    m001(conn)
    conn.execute("INSERT INTO migrations VALUES (?, '2020-01-01T00:00:00Z')", (name,))
    conn.execute("PRAGMA user_version = 1")
    stamp = "2020-01-01T00:00:00.000000Z"
    conn.execute(
        "INSERT INTO sessions (id, title, created_at, updated_at, leaf_id) VALUES ('s1', 'Old hazel notes', ?, ?, 'e1')",
        (stamp, stamp),
    )
    payload = (
        '{"role":"user","content":[{"type":"text","text":"see"},'
        '{"type":"image","media_type":"image/png","sha256":"'
        + "a" * 64
        + '","width":1,"height":1}]}'
    )
    conn.execute("INSERT INTO entries VALUES ('e1', 's1', NULL, 'message', ?, ?)", (stamp, payload))
    conn.execute("INSERT INTO blobs VALUES (?, 'image/png', 1, 1, x'00')", ("a" * 64,))
    conn.close()

    store = await SqliteStore.open(old)
    try:
        [match] = await store.search_sessions("hazel")
        assert match.summary.info.id == "s1" and match.title == "Old \x02hazel\x03 notes"
        await store.delete_session("s1")
        assert await store.get_blob("a" * 64) is None, (
            "the backfilled reference let delete find the image"
        )
    finally:
        await store.close()


async def test_sessions_from_before_the_status_are_active_and_the_column_is_checked(
    tmp_path: Path,
) -> None:
    """A database written before m009 (its sessions had no status) reads them as
    active; a status the lifecycle does not know is refused by the schema."""
    old = tmp_path / "v7.db"
    conn = sqlite3.connect(old, isolation_level=None)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    before = [(name, fn) for name, fn in MIGRATIONS if name < "m009"]
    for name, fn in before:
        fn(conn)
        conn.execute("INSERT INTO migrations VALUES (?, '2020-01-01T00:00:00Z')", (name,))
    conn.execute(f"PRAGMA user_version = {len(before)}")
    stamp = "2020-01-01T00:00:00.000000Z"
    conn.execute(
        "INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('s1', 'old', ?, ?)",
        (stamp, stamp),
    )
    conn.close()
    store = await SqliteStore.open(old)
    try:
        info = await store.get_session("s1")
        assert info is not None and info.status == "active"
        await store.set_status("s1", "completed")
        [summary] = await store.list_sessions()
        assert summary.info.status == "completed" and summary.message_count == 0
        with pytest.raises(sqlite3.IntegrityError):
            await store.set_status("s1", "finished")
        with pytest.raises(KeyError):
            await store.set_status("nope", "paused")
    finally:
        await store.close()
