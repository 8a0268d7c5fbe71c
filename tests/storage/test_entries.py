"""Entries: append, the path, children order, atomic appends, payload round trips."""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.sessions.entries import Entry
from storage import SqliteStore
from tests.storage.conftest import add_chain, chain, message, new_session
from tests.strategies import payloads


async def test_path_runs_from_the_root_to_the_leaf(store: SqliteStore) -> None:
    session_id = await new_session(store)
    trunk = await add_chain(store, session_id, ["q1", "a1", "q2", "a2"])
    branch = await add_chain(store, session_id, ["q2 again", "a2 again"], parent=trunk[1].id)
    assert [e.id for e in await store.path(trunk[-1].id)] == [e.id for e in trunk]
    assert [e.id for e in await store.path(branch[-1].id)] == [e.id for e in trunk[:2] + branch]
    assert await store.path(trunk[0].id) == [trunk[0]]
    assert await store.path("missing") == []
    assert (await store.get_session(session_id)).leaf_id == branch[-1].id  # type: ignore[union-attr]


async def test_entries_and_children_are_in_creation_order(store: SqliteStore) -> None:
    session_id = await new_session(store)
    [root] = await add_chain(store, session_id, ["root"])
    siblings = [
        Entry.new(session_id, root.id, message(f"answer {i}", "assistant")) for i in range(5)
    ]
    await store.append(session_id, siblings, siblings[-1].id)
    [other_root] = await add_chain(store, session_id, ["second root"])

    assert await store.children(root.id, session_id) == siblings
    assert await store.children(None, session_id) == [root, other_root]
    assert await store.children(siblings[0].id, session_id) == []
    assert await store.entries(session_id) == [root, *siblings, other_root]
    assert await store.get_entry(siblings[2].id) == siblings[2]
    assert await store.get_entry("missing") is None


async def test_a_failing_append_saves_nothing(store: SqliteStore, db_path: Path) -> None:
    session_id = await new_session(store)
    saved = await add_chain(store, session_id, ["kept"])
    good = chain(session_id, ["new 1", "new 2"], parent=saved[0].id)
    duplicate = Entry.new(session_id, good[-1].id, message("dup"))
    duplicate = Entry(
        saved[0].id,
        duplicate.parent_id,
        session_id,
        "message",
        duplicate.created_at,
        duplicate.payload,
    )
    with pytest.raises(sqlite3.IntegrityError):
        await store.append(session_id, [*good, duplicate], good[-1].id, title="never")

    assert await store.entries(session_id) == saved
    info = await store.get_session(session_id)
    assert info is not None and (info.leaf_id, info.title) == (saved[0].id, None)
    assert (await store.list_sessions())[0].message_count == 1
    assert await store.search("new") == []
    await add_chain(store, session_id, ["after"], parent=saved[0].id)  # the store still writes


async def test_parents_must_be_earlier_entries_of_the_same_session(store: SqliteStore) -> None:
    a, b = await new_session(store), await new_session(store)
    [in_a] = await add_chain(store, a, ["in a"])
    with pytest.raises(ValueError):
        await add_chain(store, b, ["child of a"], parent=in_a.id)
    child, parent = chain(b, ["parent", "child"])[::-1]
    with pytest.raises(ValueError):  # a child before its parent
        await store.append(b, [child, parent], child.id)
    with pytest.raises(ValueError):  # an entry of another session
        await store.append(b, chain(a, ["x"]), None)
    assert await store.entries(b) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(payloads, min_size=1, max_size=6))
def test_every_payload_round_trips_through_the_database(items) -> None:
    async def scenario(path: Path) -> None:
        store = await SqliteStore.open(path)
        try:
            session_id = await new_session(store)
            entries: list[Entry] = []
            for payload in items:
                entries.append(Entry.new(session_id, entries[-1].id if entries else None, payload))
            await store.append(session_id, entries, entries[-1].id)
            assert await store.path(entries[-1].id) == entries
            assert await store.entries(session_id) == entries
        finally:
            await store.close()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp) / "t.db"))
