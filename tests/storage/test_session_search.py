"""Searching sessions for the picker: titles and messages, one row per session,
archived ones only on request; deleting a session takes its unshared images."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from core.sessions.content import ImageContent, TextContent
from core.sessions.entries import Entry
from core.sessions.messages import Message
from core.sessions.persistence import Blob
from storage import SqliteStore
from tests.storage.conftest import add_chain, new_session


async def test_title_and_message_matches_give_one_row_per_session(store: SqliteStore) -> None:
    by_title = await new_session(store, "Oak planting plan")
    await add_chain(store, by_title, ["when to water", "in the evening"])
    by_message = await new_session(store, "Garden")
    await add_chain(
        store, by_message, ["an oak or a beech?", "The oak grows slowly.", "and the oak leaves?"]
    )
    await add_chain(store, await new_session(store, "Unrelated"), ["nothing here"])

    matches = await store.search_sessions("oak")

    assert [m.summary.info.id for m in matches] == [by_title, by_message], "title matches first"
    assert matches[0].title == "\x02Oak\x03 planting plan" and matches[0].snippet == ""
    assert matches[1].title is None and matches[1].snippet.count("\x02") == 1
    assert "\x02oak\x03" in matches[1].snippet
    assert matches[1].summary.message_count == 3
    entry = await store.get_entry(matches[1].entry_id)  # type: ignore[arg-type]
    assert entry is not None and entry.session_id == by_message


async def test_prefix_of_the_last_word_and_archived_sessions(store: SqliteStore) -> None:
    hidden = await new_session(store, "Compaction notes")
    await store.set_archived(hidden, True)
    shown = await new_session(store)
    await add_chain(store, shown, ["compact the history please"])
    assert [m.summary.info.id for m in await store.search_sessions("compa")] == [shown]
    found = await store.search_sessions("compa", include_archived=True)
    assert [m.summary.info.id for m in found] == [hidden, shown]
    assert await store.search_sessions("   ") == []
    assert await store.search_sessions('"unbalanced (') == []


async def test_renames_and_derived_titles_are_searchable(store: SqliteStore) -> None:
    session_id = await new_session(store)
    entries = [Entry.new(session_id, None, Message(role="user", content=(TextContent("hi"),)))]
    await store.append(session_id, entries, entries[0].id, title="Derived walnut title")
    assert [m.title for m in await store.search_sessions("walnut")] == [
        "Derived \x02walnut\x03 title"
    ]
    await store.set_title(session_id, "Chestnut", by_user=True)
    assert await store.search_sessions("walnut") == []
    assert [m.title for m in await store.search_sessions("chestnut")] == ["\x02Chestnut\x03"]
    await store.delete_session(session_id)
    assert await store.search_sessions("chestnut") == []


def _image_message(data: bytes) -> tuple[Message, Blob]:
    sha = hashlib.sha256(data).hexdigest()
    blob = Blob(sha, "image/png", 2, 2, data)
    return Message(
        role="user", content=(TextContent("look"), ImageContent("image/png", sha, 2, 2))
    ), blob


async def test_delete_removes_images_no_other_session_shows(
    store: SqliteStore, db_path: Path
) -> None:
    own, own_blob = _image_message(b"only in the doomed session")
    shared, shared_blob = _image_message(b"in both sessions")
    doomed, kept = await new_session(store), await new_session(store)
    for blob in (own_blob, shared_blob):
        await store.put_blob(blob)
    first = Entry.new(doomed, None, own)
    second = Entry.new(doomed, first.id, shared)
    await store.append(doomed, [first, second], second.id)
    other = Entry.new(kept, None, shared)
    await store.append(kept, [other], other.id)

    await store.delete_session(doomed)

    assert await store.get_blob(own_blob.sha256) is None
    assert await store.get_blob(shared_blob.sha256) == shared_blob
    await store.delete_session(kept)
    assert await store.get_blob(shared_blob.sha256) is None
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM entry_blobs").fetchone()[0] == 0
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []


async def test_a_one_letter_last_word_is_a_whole_word_not_a_prefix(store: SqliteStore) -> None:
    """A one-letter prefix matches nearly every word (and is slow to merge)."""
    session_id = await new_session(store)
    await add_chain(store, session_id, ["vitamin c for a cold", "plain tea"])
    assert [m.snippet for m in await store.search_sessions("vitamin c")] == [
        "\x02vitamin\x03 \x02c\x03 for a cold"
    ]
    assert await store.search_sessions("p") == []
    assert len(await store.search_sessions("pl")) == 1
