"""Session rows: registers, listing without reading entries, deletion."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.sessions.entries import Entry, ModelChange
from core.sessions.ids import now_iso
from storage import SqliteStore
from tests.storage.conftest import add_chain, chain, message, new_session, session_info


async def test_create_and_get_round_trips_every_field(store: SqliteStore) -> None:
    info = session_info(
        "t",
        title_set_by_user=True,
        archived=True,
        parent_session_id="p",
        parent_entry_id="e",
        cwd="/work",
    )
    await store.create_session(info)
    assert await store.get_session(info.id) == info
    assert await store.get_session("missing") is None


async def test_create_with_first_entries_is_one_write(store: SqliteStore) -> None:
    info = session_info()
    entries = chain(info.id, ["question", "answer"])
    info = info.__class__(**{**info.to_dict(), "leaf_id": entries[-1].id})
    await store.create_session(info, entries)
    assert [e.id for e in await store.path(entries[-1].id)] == [e.id for e in entries]
    [summary] = await store.list_sessions()
    assert (summary.message_count, summary.branch_count, summary.first_message) == (
        2,
        1,
        "question",
    )


async def test_create_rejects_a_leaf_outside_the_session(store: SqliteStore) -> None:
    info = session_info(leaf_id="nowhere")
    with pytest.raises(ValueError):
        await store.create_session(info)
    assert await store.get_session(info.id) is None


async def test_list_is_newest_first_with_counts_and_model(store: SqliteStore) -> None:
    first = await new_session(store, "first")
    second = await new_session(store, "second")
    root, answer = await add_chain(store, first, ["  what is a tree?  ", "a graph"])
    answer = Entry.new(first, root.id, message("another answer", "assistant", model="openai/gpt-x"))
    note = Entry.new(first, answer.id, message("a note", "custom"))
    change = Entry.new(first, note.id, ModelChange("anthropic/claude-x"))
    await store.append(first, [answer, note, change], change.id)

    summaries = await store.list_sessions()
    assert [s.info.id for s in summaries] == [first, second]
    top = summaries[0]
    assert top.message_count == 3  # user and assistant messages only
    assert top.branch_count == 2  # the first answer, and the end of the second branch
    assert top.first_message == "what is a tree?"
    assert top.model == "openai/gpt-x"
    assert top.info.leaf_id == change.id
    assert (summaries[1].message_count, summaries[1].branch_count, summaries[1].model) == (
        0,
        0,
        None,
    )
    assert [s.info.id for s in await store.list_sessions(limit=1, offset=1)] == [second]


async def test_archived_sessions_are_hidden_from_latest_and_list(store: SqliteStore) -> None:
    older = await new_session(store)
    newer = await new_session(store)
    await add_chain(store, newer, ["hello"])
    assert (await store.latest_session()).id == newer  # type: ignore[union-attr]
    await store.set_archived(newer, True)
    assert (await store.latest_session()).id == older  # type: ignore[union-attr]
    assert [s.info.id for s in await store.list_sessions()] == [older]
    assert [s.info.id for s in await store.list_sessions(include_archived=True)] == [newer, older]
    await store.set_archived(older, True)
    assert await store.latest_session() is None
    await store.set_archived(newer, False)
    assert (await store.latest_session()).id == newer  # type: ignore[union-attr]


async def test_moving_the_leaf_makes_a_session_the_latest(store: SqliteStore) -> None:
    a = await new_session(store)
    entries = await add_chain(store, a, ["one", "two"])
    await new_session(store)
    await store.set_leaf(a, entries[0].id)
    info = await store.latest_session()
    assert info is not None and (info.id, info.leaf_id) == (a, entries[0].id)


async def test_set_leaf_only_accepts_the_sessions_entries(store: SqliteStore) -> None:
    a, b = await new_session(store), await new_session(store)
    [entry] = await add_chain(store, a, ["hi"])
    with pytest.raises(ValueError):
        await store.set_leaf(b, entry.id)
    assert (await store.get_session(b)).leaf_id is None  # type: ignore[union-attr]
    await store.set_leaf(a, None)
    assert (await store.get_session(a)).leaf_id is None  # type: ignore[union-attr]


async def test_a_derived_title_never_replaces_the_users(store: SqliteStore) -> None:
    session_id = await new_session(store)
    await add_chain(store, session_id, ["hi"])
    entry = Entry.new(session_id, None, message("again"))
    await store.append(session_id, [entry], entry.id, title="derived")
    assert (await store.get_session(session_id)).title == "derived"  # type: ignore[union-attr]
    await store.set_title(session_id, "mine")
    await store.set_title(session_id, "derived later", by_user=False)
    entry = Entry.new(session_id, entry.id, message("more"))
    await store.append(session_id, [entry], entry.id, title="derived again")
    info = await store.get_session(session_id)
    assert info is not None and (info.title, info.title_set_by_user) == ("mine", True)
    await store.set_title(session_id, "renamed")
    assert (await store.get_session(session_id)).title == "renamed"  # type: ignore[union-attr]


async def test_append_without_a_title_keeps_the_title(store: SqliteStore) -> None:
    session_id = await new_session(store, "kept")
    await add_chain(store, session_id, ["hi"])
    assert (await store.get_session(session_id)).title == "kept"  # type: ignore[union-attr]


async def test_writes_to_a_missing_session_raise_key_error(store: SqliteStore) -> None:
    entry = Entry.new("missing", None, message("hi"))
    for write in (
        store.append("missing", [entry], entry.id),
        store.set_leaf("missing", None),
        store.set_title("missing", "t"),
        store.set_archived("missing", True),
    ):
        with pytest.raises(KeyError):
            await write
    await store.delete_session("missing")  # deleting twice is harmless


async def test_delete_session_removes_everything_it_owns(store: SqliteStore, db_path: Path) -> None:
    doomed, kept = await new_session(store), await new_session(store)
    entries = await add_chain(store, doomed, ["alpha question", "alpha answer", "more"])
    await add_chain(store, doomed, ["a branch"], parent=entries[0].id)
    await store.set_label(doomed, entries[1].id, "good")
    kept_entries = await add_chain(store, kept, ["beta question"])
    fork = await new_session(store, parent_session_id=doomed, parent_entry_id=entries[1].id)

    await store.delete_session(doomed)

    assert await store.get_session(doomed) is None
    assert await store.entries(doomed) == []
    assert await store.get_entry(entries[0].id) is None
    assert await store.labels(doomed) == {}
    assert await store.search("alpha") == []
    assert [e.id for e in await store.entries(kept)] == [e.id for e in kept_entries]
    assert (await store.get_session(fork)).parent_session_id == doomed  # type: ignore[union-attr]
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM entries_fts").fetchone()[0] == 1
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


async def test_updated_at_moves_forward_on_append(store: SqliteStore) -> None:
    session_id = await new_session(store)
    before = (await store.get_session(session_id)).updated_at  # type: ignore[union-attr]
    await add_chain(store, session_id, ["hi"])
    after = (await store.get_session(session_id)).updated_at  # type: ignore[union-attr]
    assert before < after <= now_iso()
