"""The conversation in core: send, retry, edit, move, summarize, fork and compact over the fake
provider (through real httpx) and a real SQLite file, watched only
through its event stream, as every front end watches it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply, ToolCall

from core.chat.conversation import Conversation
from core.chat.events import (
    CompactionEnded,
    CompactionStarted,
    EntriesSaved,
    Event,
    PositionMoved,
    ToolChanged,
    TurnEnded,
)
from core.chat.front_end import ToolUse
from core.compaction.run import NothingToCompact
from core.providers.base import TextDelta
from core.sessions.entries import BranchSummary, Compaction
from core.sessions.session import Session
from core.settings import Settings
from core.tools import Approval, ToolRegistry
from storage import SqliteStore

MODEL = "openai/fake-model"


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
        default_model=MODEL,
        default_thinking="off",
        api_base=fake_provider.base_url + "/v1",
    )


def recorder(conversation: Conversation) -> list[Event]:
    events: list[Event] = []
    conversation.subscribe(events.append)
    return events


def saved(events: list[Event]) -> list[tuple[str, ...]]:
    """The roles (or kinds) of each EntriesSaved event, in order."""
    return [
        tuple(e.message.role if e.message else e.type for e in event.entries)
        for event in events
        if isinstance(event, EntriesSaved)
    ]


async def test_send_saves_the_question_streams_the_answer_and_ends_the_turn(
    conversation: Conversation, fake_provider: FakeProvider, store: SqliteStore
) -> None:
    fake_provider.script(Reply(text="Hello there, friend", chunk_size=4))
    events = recorder(conversation)

    result = await conversation.send("hi")

    assert result.stop == "answered" and result.message.text == "Hello there, friend"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there, friend"
    assert saved(events) == [("model_change", "user"), ("assistant",)]
    assert isinstance(events[-1], TurnEnded) and events[-1].result is result
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert first_text > 0 and isinstance(events[0], EntriesSaved), "the question is saved first"
    reopened = [e.message.role for e in await store.entries(conversation.session.id) if e.message]
    assert reopened == ["user", "assistant"]


async def test_retry_answers_again_as_an_alternative(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(Reply(text="first"), Reply(text="second"))
    first = await conversation.send("pick a number")
    events = recorder(conversation)
    again = await conversation.retry(first.final.entry.id)

    assert again is not None and again.message.text == "second"
    assert events[0] == PositionMoved(first.final.entry.parent_id, left_branch=False)
    assert again.final.entry.parent_id == first.final.entry.parent_id
    assert [m.text for m in conversation.session.messages()] == ["pick a number", "second"]


async def test_retry_with_nothing_to_answer_says_so(conversation: Conversation) -> None:
    assert await conversation.retry() is None


async def test_edit_keeps_the_old_branch_and_answers_the_new_text(
    conversation: Conversation, fake_provider: FakeProvider, store: SqliteStore
) -> None:
    fake_provider.script(Reply(text="about cats"), Reply(text="about dogs"))
    await conversation.send("tell me about cats")
    question = conversation.session.path[-2]
    events = recorder(conversation)

    await conversation.edit(question, "tell me about dogs")

    assert [m.text for m in conversation.session.messages()] == [
        "tell me about dogs",
        "about dogs",
    ]
    moved = [e for e in events if isinstance(e, PositionMoved)]
    assert moved == [PositionMoved(question.parent_id, left_branch=True)]
    texts = {e.message.text for e in await store.entries(conversation.session.id) if e.message}
    assert {"tell me about cats", "about cats"} <= texts, "the old branch stays"


async def test_moving_between_alternative_replies_leaves_no_branch(
    conversation: Conversation, fake_provider: FakeProvider, store: SqliteStore
) -> None:
    fake_provider.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    first = await conversation.send("q")
    deeper = (await conversation.send("more")).final.entry.id
    await conversation.move_to(first.final.entry.id)
    await conversation.retry()
    retried = conversation.session.leaf_id

    assert await conversation.move_to(first.final.entry.id) is False
    assert conversation.session.leaf_id == first.final.entry.id
    # each path as the store has it (the part shared with the last one is reused)
    for target in (first.final.entry.id, deeper, retried, None, deeper):
        await conversation.move_to(target)
        assert conversation.session.path == (await store.path(target) if target else [])


async def test_tool_calls_are_reported_with_their_states(
    conversation: Conversation, fake_provider: FakeProvider, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("the notes\n")
    registry = ToolRegistry.default(conversation.settings, cwd=str(tmp_path))
    asked: list[str] = []

    async def approve(call, tool, preview) -> Approval:
        asked.append(tool.name)
        return Approval("deny", "not now")

    fake_provider.script(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": "notes.txt"}, id="c1"),
                ToolCall("write_file", {"path": "x.txt", "content": "x"}, id="c2"),
            ]
        ),
        Reply(text="done"),
    )
    events = recorder(conversation)
    states: list[tuple[str, str]] = []  # as each event came: the activity changes in place
    conversation.subscribe(
        lambda e: (
            isinstance(e, ToolChanged) and states.append((e.activity.call.id, e.activity.state))
        )
    )
    try:
        result = await conversation.send("read then write", tools=ToolUse(registry, approve))
    finally:
        await registry.aclose()

    assert ("c1", "running") in states and ("c1", "done") in states
    assert ("c2", "denied") in states and ("c2", "running") not in states
    assert asked == ["write_file"] and not (tmp_path / "x.txt").exists()
    assert saved(events) == [("model_change", "user"), ("assistant", "tool_result"), ("assistant",)]
    assert result.steps == 1 and result.message.text == "done"


async def test_manual_compaction_is_announced_and_saved(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    long = "words " * 400
    fake_provider.script(*(Reply(text=f"answer {i} {long}") for i in range(4)))
    for i in range(4):
        await conversation.send(f"question {i} {long}")
    fake_provider.script(Reply(text="## Goal\nThe summary."))
    events = recorder(conversation)

    entry = await conversation.compact("the questions")

    assert isinstance(entry.payload, Compaction) and "The summary." in entry.payload.summary
    assert events[0] == CompactionStarted("manual")
    assert saved(events) == [("compaction",)]
    assert events[-1] == CompactionEnded("manual", entry)


async def test_a_compaction_that_writes_nothing_still_ends(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(Reply(text="short"))
    await conversation.send("short")
    events = recorder(conversation)

    with pytest.raises(NothingToCompact):
        await conversation.compact()

    assert events[0] == CompactionStarted("manual")
    assert events[-1] == CompactionEnded("manual", None)
    assert saved(events) == []


async def test_the_branch_left_is_summarized_where_the_user_went(
    conversation: Conversation, fake_provider: FakeProvider, store: SqliteStore
) -> None:
    fake_provider.script(Reply(text="about cats"), Reply(text="- the user asked about cats"))
    await conversation.send("tell me about cats")
    old_leaf = conversation.session.leaf_id
    question = conversation.session.path[-2]
    assert old_leaf is not None
    events = recorder(conversation)

    assert await conversation.move_to(question.parent_id) is True
    entry = await conversation.summarize_branch(old_leaf, question.parent_id)

    assert isinstance(entry.payload, BranchSummary)
    assert entry.payload.summary == "- the user asked about cats"
    assert entry.payload.from_id == question.id
    assert entry.parent_id == question.parent_id and conversation.session.leaf_id == entry.id
    assert saved(events) == [("branch_summary",)]
    summary_request = fake_provider.requests[-1]
    assert "tell me about cats" in str(summary_request.body["messages"])
    tree = conversation.known_tree
    assert tree is not None and entry.id in tree and tree.leaf_id == entry.id
    stored = {e.id for e in await store.entries(conversation.session.id)}
    assert {old_leaf, entry.id} <= stored, "the old branch stays beside the summary"


async def test_the_tree_is_read_once_and_kept_in_step_with_every_append(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(Reply(text="one"), Reply(text="two"))
    first = await conversation.send("q")
    tree = await conversation.tree()
    await conversation.retry()

    second = conversation.session.leaf_id
    assert conversation.known_tree is tree and second in tree and tree.leaf_id == second
    assert first.final.entry is not None and second is not None
    assert tree.alternatives(second) == [first.final.entry.id, second]
    await conversation.set_label(second, "the second")
    assert tree.labels == {second: "the second"}
    assert await conversation.session.labels() == {second: "the second"}


async def test_fork_copies_the_path_into_a_new_session(
    conversation: Conversation, fake_provider: FakeProvider
) -> None:
    fake_provider.script(*(Reply(text=f"answer {i}") for i in range(3)))
    for i in range(3):
        await conversation.send(f"question {i}")
    leaf = conversation.session.leaf_id
    assert leaf is not None

    forked = await conversation.fork(leaf, first_k=1, last_n=1)

    # the kept tail starts at the user's message it answers
    assert [m.text for m in forked.messages()] == ["question 0", "question 2", "answer 2"]
    assert forked.info.parent_session_id == conversation.session.id
    assert conversation.session.leaf_id == leaf and len(conversation.session.messages()) == 6
