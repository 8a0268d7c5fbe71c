"""Issue 35 through the conversation: regenerate asks the same agent again,
``round`` lets the agents answer each other (one reply a turn, stopped like
any reply), over the fake provider and a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply, Stall

from core.chat.conversation import Conversation
from core.chat.events import AgentAsked, Event
from core.providers.base import TextDelta
from core.sessions.session import Session
from core.settings import Agent, Endpoint, Settings
from storage import SqliteStore


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
            Agent("Critic", "lab/critic", system="You judge."),
            Agent("Poet", "lab/poet", system="You rhyme."),
        ),
    )
    session = await Session.create(store, cwd=str(tmp_path))
    return Conversation(
        session, settings, default_model="lab/critic", default_thinking="off", api_base=None
    )


def models_asked(fake_provider: FakeProvider) -> list[str]:
    return [r.body["model"] for r in fake_provider.requests]


def authors(conversation: Conversation) -> list[str | None]:
    return [
        e.message.agent
        for e in conversation.session.path
        if e.message is not None and e.message.role == "assistant"
    ]


async def test_regenerate_asks_the_same_agent_again(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script_for("critic", Reply(text="Too long."), Reply(text="Still too long."))
    fake_provider.script_for("poet", Reply(text="A rhyme."))
    await conversation.send("@Critic @Poet look")
    first_critic = next(
        e for e in conversation.session.path if e.message and e.message.agent == "Critic"
    )

    result = await conversation.retry(first_critic.id)

    assert result is not None and result.message.agent == "Critic"
    assert result.message.text == "Still too long."
    assert models_asked(fake_provider) == ["critic", "poet", "critic"]
    assert authors(conversation) == ["Critic"]


async def test_regenerating_the_last_agent_answers_after_the_one_before(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    """The Poet's reply follows the Critic's, not a question: it can be asked again all the same."""
    fake_provider.script_for("critic", Reply(text="Too long."))
    fake_provider.script_for("poet", Reply(text="A rhyme."), Reply(text="Another rhyme."))
    await conversation.send("@Critic @Poet look")

    result = await conversation.retry()

    assert result is not None and result.message.text == "Another rhyme."
    assert models_asked(fake_provider) == ["critic", "poet", "poet"]
    assert authors(conversation) == ["Critic", "Poet"]


async def test_a_round_lets_the_agents_answer_each_other(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script_for("critic", *(Reply(text=f"critic {n}") for n in range(3)))
    fake_provider.script_for("poet", *(Reply(text=f"poet {n}") for n in range(3)))
    await conversation.send("@Critic @Poet begin")

    result = await conversation.round(2)

    assert result is not None and result.stop == "answered"
    assert models_asked(fake_provider) == ["critic", "poet"] * 3
    assert authors(conversation) == ["Critic", "Poet"] * 3
    last = fake_provider.last_request.body["messages"]
    assert [m["role"] for m in last] == ["system", "user"] + ["assistant", "user"] * 2
    assert last[0]["content"] == "You rhyme."
    assert last[-1]["content"] == "Critic: critic 2"


async def test_a_round_needs_two_agents(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(Reply(text="plain"))
    await conversation.send("no agents here")
    assert await conversation.round(3) is None
    assert len(fake_provider.requests) == 1


async def test_stopping_a_round_keeps_what_arrived_and_asks_no_one_else(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script_for("critic", Reply(text="c0"), Reply(text="c1"))
    fake_provider.script_for("poet", Reply(text="p0"))
    fake_provider.script_for(
        "poet", Stall(seconds=60, after_chunks=3, reply=Reply(text="half of it", chunk_size=5))
    )
    streaming = asyncio.Event()
    speaking: list[str] = []

    def watch(event: Event) -> None:
        if isinstance(event, AgentAsked):
            speaking.append(event.agent)
        elif isinstance(event, TextDelta) and speaking[-1:] == ["Poet"] and len(speaking) == 4:
            streaming.set()

    conversation.subscribe(watch)
    await conversation.send("@Critic @Poet begin")
    task = asyncio.ensure_future(conversation.round(2))
    await asyncio.wait_for(streaming.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert speaking == ["Critic", "Poet", "Critic", "Poet"]
    assert models_asked(fake_provider) == ["critic", "poet", "critic", "poet"]
    stopped = conversation.session.path[-1].message
    assert stopped is not None and stopped.agent == "Poet" and stopped.stop_reason == "aborted"
    assert stopped.text and "half of it".startswith(stopped.text)
