"""Issue 35: replies saved with their authors (migration m008_agent_names). A
database from before it opens with every old reply read as "no agent"; the
session's list row names the agents that replied, in the order they first did."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.sessions.content import TextContent
from core.sessions.messages import Message, user_text
from core.sessions.session import Session
from storage import SqliteStore
from storage.migrations import MIGRATIONS

STAMP = "2020-01-01T00:00:00.000000Z"
OLD_REPLY = '{"role":"assistant","content":[{"type":"text","text":"old answer"}],"model":"m"}'


def reply(text: str, agent: str | None) -> Message:
    return Message(role="assistant", content=(TextContent(text),), model="m", agent=agent)


def database_before_agents(path: Path) -> None:
    """Schema 7 holding one session: a question and a reply."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, fn in MIGRATIONS[:7]:
        fn(conn)
        conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, STAMP))
    conn.execute("PRAGMA user_version = 7")
    conn.execute(
        "INSERT INTO sessions (id, created_at, updated_at, leaf_id, message_count)"
        " VALUES ('s1', ?, ?, 'e2', 2)",
        (STAMP, STAMP),
    )
    question = '{"role":"user","content":[{"type":"text","text":"old question"}]}'
    conn.execute(
        "INSERT INTO entries VALUES ('e1', 's1', NULL, 'message', ?, ?)", (STAMP, question)
    )
    conn.execute(
        "INSERT INTO entries VALUES ('e2', 's1', 'e1', 'message', ?, ?)", (STAMP, OLD_REPLY)
    )
    conn.close()


async def test_an_old_database_reads_as_no_agent_then_records_new_authors(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    database_before_agents(path)
    store = await SqliteStore.open(path)
    try:
        session = await Session.open(store, "s1")
        assert [e.message.agent for e in session.path if e.message] == [None, None]
        assert (await store.get_summary("s1")).agents == ()
        await session.append_many(
            [user_text("@Critic @Poet again"), reply("no", "Critic"), reply("yes", "Poet")]
        )
        await session.append(reply("still no", "Critic"))
        assert (await store.get_summary("s1")).agents == ("Critic", "Poet")
    finally:
        await store.close()
    reopened = await SqliteStore.open(path)
    try:
        session = await Session.open(reopened, "s1")
        authors = [e.message.agent for e in session.path if e.message]
        assert authors == [None, None, None, "Critic", "Poet", "Critic"]
    finally:
        await reopened.close()


def test_an_agent_name_survives_a_round_trip_and_a_bad_one_is_refused() -> None:
    message = reply("hi", "Poet")
    assert Message.from_dict(message.to_dict()) == message
    assert "agent" not in reply("hi", None).to_dict()
    with pytest.raises(ValueError, match="agent name"):
        Message.from_dict({**message.to_dict(), "agent": ["not", "a", "name"]})
