"""Per-agent notes (issue 35, ``[[agents]]`` ``note``/``note_depth``): an
agent's note goes into that agent's requests only, at its own depth, beside
the session's note; over the fake provider and a real SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply

from core.chat.conversation import Conversation
from core.sessions.entries import Note
from core.sessions.session import Session
from core.settings import Agent, Endpoint, Settings
from storage import SqliteStore

CRITIC_NOTE = "[Note: cite a line]"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    store = await SqliteStore.open(tmp_path / "t.db")
    yield store
    await store.close()


@pytest.fixture
async def conversation(store: SqliteStore, fake_provider: FakeProvider, tmp_path: Path):
    settings = Settings(
        retries=0,
        endpoints=(Endpoint("lab", fake_provider.base_url + "/v1", models=("critic", "poet")),),
        agents=(
            Agent("Critic", "lab/critic", note="cite a line", note_depth=2),
            Agent("Poet", "lab/poet"),
        ),
    )
    session = await Session.create(store, cwd=str(tmp_path))
    return Conversation(
        session, settings, default_model="lab/critic", default_thinking="off", api_base=None
    )


def messages_after(request_messages: list[dict], text: str) -> int | None:
    """How many messages follow the one whose content holds ``text`` (None: absent)."""
    found = [i for i, m in enumerate(request_messages) if text in str(m["content"])]
    assert len(found) <= 1, f"{text!r} sent more than once"
    return len(request_messages) - 1 - found[0] if found else None


async def test_an_agents_note_reaches_only_its_own_requests_at_its_depth(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script_for("critic", Reply(text="c0"), Reply(text="c1"))
    fake_provider.script_for("poet", Reply(text="p0"), Reply(text="p1"))
    await conversation.send("@Critic @Poet begin")
    await conversation.send("@Critic @Poet again")

    by_model = {"critic": [], "poet": []}  # type: dict[str, list[list[dict]]]
    for request in fake_provider.requests:
        by_model[request.body["model"]].append(request.body["messages"])
    assert [messages_after(m, CRITIC_NOTE) for m in by_model["poet"]] == [None, None]
    first, second = by_model["critic"]
    assert messages_after(first, CRITIC_NOTE) is not None  # a short request opens with it
    assert messages_after(second, CRITIC_NOTE) == 2
    roles = [m["role"] for m in second]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles


async def test_an_agents_note_goes_beside_the_sessions_note(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script_for("critic", Reply(text="c0"), Reply(text="c1"))
    fake_provider.script_for("poet", Reply(text="p0"))
    await conversation.send("@Critic @Poet begin")
    await conversation.session.append(Note("stay polite", depth=0))
    await conversation.send("@Critic again")

    last = fake_provider.last_request.body["messages"]
    assert messages_after(last, "[Note: stay polite]") == 0
    assert messages_after(last, CRITIC_NOTE) == 2
