"""Checkpoints of streaming replies: replaced in place, replaced by their entry,
recovered as an incomplete entry once the process that wrote them is gone."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from core.chat.checkpoint import STOPPED, ReplyCheckpoint
from core.providers.assemble import MessageBuilder
from core.providers.base import TextDelta
from core.sessions.entries import Entry
from core.sessions.session import Session
from storage import SqliteStore, partials
from tests.storage.conftest import add_chain, message, new_session


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def partial(session_id: str, parent: str, text: str, entry_id: str | None = None) -> Entry:
    entry = Entry.new(session_id, parent, message(text, "assistant", stop_reason="interrupted"))
    return entry if entry_id is None else replace(entry, id=entry_id)


async def checkpoint_of(store: SqliteStore, entry: Entry, owner: int) -> None:
    """A checkpoint as another process (``owner``) saved it."""
    await store._write(partials.save, entry, owner)


def checkpoints(db_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT id, payload FROM partial_replies").fetchall()


async def test_a_checkpoint_is_replaced_in_place_then_by_its_entry(
    store: SqliteStore, db_path: Path
) -> None:
    session_id = await new_session(store)
    [question] = await add_chain(store, session_id, ["tell me"])
    first = partial(session_id, question.id, "Once")
    await store.save_partial(first)
    await store.save_partial(partial(session_id, question.id, "Once upon", first.id))
    [(row_id, payload)] = checkpoints(db_path)
    assert row_id == first.id and "Once upon" in payload
    assert await store.recover_partials(session_id) == []  # its owner (this process) is alive

    done = replace(first, payload=message("Once upon a time.", "assistant", stop_reason="stop"))
    await store.append(session_id, [done], done.id)
    assert checkpoints(db_path) == []
    assert [e.id for e in await store.entries(session_id)] == [question.id, done.id]


async def test_a_dead_process_checkpoint_becomes_the_leaf_once(
    store: SqliteStore, db_path: Path
) -> None:
    session_id = await new_session(store)
    [question] = await add_chain(store, session_id, ["tell me"])
    left = partial(session_id, question.id, "Once upon")
    await checkpoint_of(store, left, dead_pid())

    session = await Session.open(store, session_id)
    assert [e.id for e in session.path] == [question.id, left.id]
    assert session.path[-1].payload == left.payload
    assert session.leaf_id == left.id
    assert checkpoints(db_path) == []
    assert await store.recover_partials(session_id) == []
    assert (await store.get_summary(session_id)).message_count == 2  # type: ignore[union-attr]


async def test_a_recovered_checkpoint_leaves_a_moved_leaf_alone(store: SqliteStore) -> None:
    session_id = await new_session(store)
    [question] = await add_chain(store, session_id, ["tell me"])
    left = partial(session_id, question.id, "Once upon")
    await checkpoint_of(store, left, dead_pid())
    [other] = await add_chain(store, session_id, ["something else"])

    [recovered] = await store.recover_partials(session_id)
    assert recovered.id == left.id
    assert (await store.get_session(session_id)).leaf_id == other.id  # type: ignore[union-attr]


async def test_a_checkpoint_whose_entry_was_saved_is_only_dropped(
    store: SqliteStore, db_path: Path
) -> None:
    session_id = await new_session(store)
    [question, answer] = await add_chain(store, session_id, ["tell me", "done"])
    await checkpoint_of(store, partial(session_id, question.id, "Once", answer.id), dead_pid())
    assert await store.recover_partials(session_id) == []
    assert checkpoints(db_path) == []
    assert len(await store.entries(session_id)) == 2


async def test_the_reply_checkpoint_is_due_at_the_first_text_then_every_interval(
    store: SqliteStore, db_path: Path
) -> None:
    session_id = await new_session(store)
    [question] = await add_chain(store, session_id, ["tell me"])
    session = await Session.open(store, session_id)
    now = [0.0]
    checkpoint = ReplyCheckpoint(session, interval=2.0, clock=lambda: now[0])
    builder = MessageBuilder(model="m")
    assert not checkpoint.due(builder)  # nothing to save yet
    builder.add(TextDelta("Once"))
    assert checkpoint.due(builder)  # the first text, at once
    await checkpoint.save(builder)
    now[0] = 1.0
    assert not checkpoint.due(builder)
    now[0] = 2.0
    assert checkpoint.due(builder)

    [(row_id, _)] = checkpoints(db_path)
    assert row_id == checkpoint.entry_id
    await store._write(
        lambda conn: conn.execute("UPDATE partial_replies SET owner_pid = ?", (dead_pid(),))
    )
    reopened = await Session.open(store, session_id)
    saved = reopened.path[-1].message
    assert saved is not None and reopened.path[-1].parent_id == question.id
    assert (saved.text, saved.stop_reason, saved.error) == ("Once", "interrupted", STOPPED)
