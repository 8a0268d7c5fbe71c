"""What a front end hands the conversation's doors (send, edit, retry): the
tools it offers, and hooks for what it does between the steps, over the fake
provider (through real httpx) and a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply

from core.chat.conversation import Conversation
from core.chat.events import Event, Notice
from core.chat.front_end import TurnHooks
from core.chat.results import AgentResult
from core.sessions.entries import Entry
from core.sessions.session import Session
from core.settings import Settings
from storage import SqliteStore


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    store = await SqliteStore.open(tmp_path / "t.db")
    yield store
    await store.close()


@pytest.fixture
async def conversation(store: SqliteStore, fake_provider: FakeProvider, tmp_path: Path):
    session = await Session.create(store, cwd=str(tmp_path))
    return Conversation(
        session,
        Settings(retries=0),
        default_model="openai/fake-model",
        default_thinking="off",
        api_base=fake_provider.base_url + "/v1",
    )


def texts(conversation: Conversation) -> list[str]:
    return [m.text for m in conversation.session.messages()]


async def test_send_says_when_the_message_is_saved_and_lets_the_answer_be_wrapped(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(Reply(text="hello"))
    steps: list[str] = []

    def saved(entries: Sequence[Entry]) -> None:
        message = entries[-1].message
        assert message is not None
        steps.append(f"saved {message.text}, {len(fake_provider.requests)} requests")

    async def answering(
        answer: Callable[[], Awaitable[AgentResult | None]],
    ) -> AgentResult | None:
        steps.append("before the answer")
        result = await answer()
        steps.append("after the answer")
        return result

    result = await conversation.send("hi", hooks=TurnHooks(saved=saved, answering=answering))

    assert steps == ["saved hi, 0 requests", "before the answer", "after the answer"]
    assert result is not None and result.message.text == "hello"


async def test_a_send_stopped_while_its_message_is_saved_still_saves_it(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    told: list[str] = []
    sending = asyncio.ensure_future(
        conversation.send("keep me", hooks=TurnHooks(saved=lambda e: told.append("saved")))
    )
    await asyncio.sleep(0)  # one step of the loop: the send is saving (nothing timed)
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    assert texts(conversation) == ["keep me"] and told == ["saved"]
    assert fake_provider.requests == [], "stopped before the answer was asked for"


async def test_an_edit_the_front_end_holds_back_moves_and_sends_nothing(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(Reply(text="about cats"))
    await conversation.send("tell me about cats")
    question = conversation.session.path[-2]
    old_leaf = conversation.session.leaf_id
    left: list[tuple[str | None, bool]] = []

    async def leaving(previous: str | None, left_branch: bool) -> bool:
        left.append((previous, left_branch))
        return False  # e.g. a branch summary is asked for first

    result = await conversation.edit(question, "dogs", hooks=TurnHooks(left=leaving))

    assert result is None and left == [(old_leaf, True)]
    assert conversation.session.leaf_id == question.parent_id
    assert len(fake_provider.requests) == 1


async def test_an_at_word_without_a_round_table_is_just_text(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(Reply(text="ok"))
    events: list[Event] = []
    conversation.subscribe(events.append)
    await conversation.send("mail it to @bob")
    assert not [e for e in events if isinstance(e, Notice)]
