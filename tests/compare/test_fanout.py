"""Fan-out against the fake provider through the real clients: every model's
reply saved as an alternative of the same question."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from fake_provider import Fail, Reply

from core.branching.comparison import timing
from core.branching.tree import SessionTree
from core.chat.conversation import Conversation
from core.chat.events import ColumnEvent, ColumnFinished, EntriesSaved, Event, PositionMoved
from core.chat.fanout import FanOutError, fan_out, question_of
from core.chat.target import target_for
from core.providers.base import TextDelta
from core.providers.target import Target
from core.sessions.entries import ModelChange
from core.sessions.session import Session
from core.settings import Settings

MODELS = ["openai/alpha", "anthropic/claude-beta", "openai/gamma"]


def at(base: str | None) -> Callable[[str], Target]:
    """Every model sent to ``base`` (as with ``--api-base``)."""
    return lambda model: target_for(model, Settings(), base)


async def tree_of(session: Session) -> SessionTree:
    entries = await session.store.entries(session.id)
    info = await session.store.get_session(session.id)
    return SessionTree.from_entries(entries, await session.labels(), info.leaf_id)


async def test_every_model_answers_as_an_alternative_of_the_question(fake_provider, asked) -> None:
    fake_provider.script_for("alpha", Reply(text="Four.", usage={"output_tokens": 7}))
    fake_provider.script_for("claude-beta", Reply(text="It is 4.", thinking="2+2=4"))
    fake_provider.script_for("gamma", Reply(text="4"))
    question = asked.leaf_id
    events = []
    result = await fan_out(
        asked,
        Settings(),
        MODELS,
        thinking="low",
        targets=at(fake_provider.base_url),
        on_event=events.append,
    )
    assert [c.model for c in result.columns] == MODELS
    errors = [(c.error, c.message.stop_reason) for c in result.columns]
    assert [c.message.text for c in result.columns] == ["Four.", "It is 4.", "4"], errors
    assert all(c.error is None for c in result.columns), errors
    assert result.anchor_id == question
    tree = await tree_of(asked)
    replies = tree.alternatives(result.columns[0].reply.id)
    assert sorted(replies) == sorted(c.reply.id for c in result.columns)
    for column in result.columns:
        change, reply = column.entries
        # the model change remembers where the reply came from (--api-base)
        endpoint = fake_provider.base_url
        assert change.payload == ModelChange(column.model, "low", endpoint)
        assert change.parent_id == question
        assert reply.message.model == column.model and reply.message.usage.output_tokens > 0
        ttft, total = timing(reply.message)
        assert ttft is not None and total is not None and 0 <= ttft <= total
    assert result.columns[0].message.usage.output_tokens == 7
    # the position is on the first model's reply, in memory and in the database
    assert asked.leaf_id == result.columns[0].reply.id == tree.leaf_id
    assert [e.id for e in asked.path][-2:] == [c.id for c in result.columns[0].entries]
    # events are tagged with their column
    deltas = {e.column: "" for e in events if isinstance(e, ColumnEvent)}
    for event in events:
        if isinstance(event, ColumnEvent) and isinstance(event.event, TextDelta):
            deltas[event.column] += event.event.text
    assert deltas == {0: "Four.", 1: "It is 4.", 2: "4"}
    assert sorted(e.column for e in events if isinstance(e, ColumnFinished)) == [0, 1, 2]
    models_asked = sorted(r.body["model"] for r in fake_provider.requests)
    assert models_asked == ["alpha", "claude-beta", "gamma"]


async def test_a_failing_model_shows_its_error_and_the_others_answer(fake_provider, asked) -> None:
    fake_provider.script_for("alpha", Reply(text="Four."))
    fake_provider.script_for("claude-beta", Fail(401))
    fake_provider.script_for("gamma", Reply(text="4"))
    result = await fan_out(asked, Settings(retries=0), MODELS, targets=at(fake_provider.base_url))
    alpha, beta, gamma = result.columns
    assert alpha.error is None and gamma.error is None
    assert beta.error and beta.message.stop_reason == "error"
    assert "sk-ant-test" not in beta.error
    assert (alpha.message.text, gamma.message.text) == ("Four.", "4")
    tree = await tree_of(asked)
    assert len(tree.alternatives(alpha.reply.id)) == 3


async def test_cancelling_keeps_what_streamed_in_each_column(fake_provider, asked) -> None:
    long = " ".join(f"word{i}" for i in range(400))
    for model in ("alpha", "claude-beta"):
        fake_provider.script_for(model, Reply(text=long, chunk_size=8, delay=0.02))
    seen = {0: "", 1: ""}
    streaming = asyncio.Event()

    def on_event(event) -> None:
        if isinstance(event, ColumnEvent) and isinstance(event.event, TextDelta):
            seen[event.column] += event.event.text
            if all(len(text) > 40 for text in seen.values()):
                streaming.set()

    task = asyncio.create_task(
        fan_out(
            asked, Settings(), MODELS[:2], targets=at(fake_provider.base_url), on_event=on_event
        )
    )
    await asyncio.wait_for(streaming.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    tree = await tree_of(asked)
    question = [e for e in asked.path if e.message and e.message.role == "user"][-1]
    replies = [tree.entry(i).message for i in tree.alternatives(tree.deepest_leaf(question.id))]
    assert [m.stop_reason for m in replies] == ["aborted", "aborted"]
    for reply in replies:
        assert 40 < len(reply.text) < len(long) and long.startswith(reply.text)
    assert asked.path[-1].message.model == "openai/alpha"


async def test_regenerating_a_reply_adds_the_models_beside_it(fake_provider, asked) -> None:
    await fan_out(asked, Settings(), MODELS[:2], targets=at(fake_provider.base_url))
    first = asked.leaf_id
    await asked.move_leaf(await question_of(asked, first))
    assert asked.path[-1].message.role == "user"
    await fan_out(
        asked, Settings(), ["openai/delta", "openai/eps"], targets=at(fake_provider.base_url)
    )
    tree = await tree_of(asked)
    assert len(tree.alternatives(first)) == 4


async def test_refused_without_a_question_or_with_one_model(store, asked) -> None:
    with pytest.raises(FanOutError, match="2 to 4"):
        await fan_out(asked, Settings(), ["openai/a", "openai/a"], targets=at(None))
    empty = await Session.create(store)
    with pytest.raises(FanOutError, match="send a message first"):
        await fan_out(empty, Settings(), MODELS, targets=at(None))


async def test_a_handler_that_raises_loses_no_reply(fake_provider, asked) -> None:
    def broken(event) -> None:
        if isinstance(event, ColumnEvent):
            raise BrokenPipeError("the reader went away")

    with pytest.raises(BrokenPipeError):
        await fan_out(
            asked, Settings(), MODELS[:2], targets=at(fake_provider.base_url), on_event=broken
        )
    tree = await tree_of(asked)
    replies = [tree.entry(i).message for i in tree.alternatives(asked.leaf_id)]
    assert sorted(m.model for m in replies) == sorted(MODELS[:2])
    assert all(m.stop_reason == "stop" and m.text.startswith("echo:") for m in replies)


async def test_the_conversation_reports_a_comparison_on_its_event_stream(
    fake_provider, asked
) -> None:
    """Front ends watch a comparison as they watch a turn: column events, what
    each column saved, the position moved to the first reply, the totals."""
    fake_provider.script_for("alpha", Reply(text="Four.", usage={"output_tokens": 7}))
    fake_provider.script_for("claude-beta", Reply(text="It is 4.", usage={"output_tokens": 5}))
    conversation = Conversation(
        asked,
        Settings(),
        default_model="openai/alpha",
        default_thinking="off",
        api_base=fake_provider.base_url,
        thinking="low",
    )
    await conversation.load_totals()
    events: list[Event] = []
    conversation.subscribe(events.append)
    result = await conversation.compare(MODELS[:2])
    texts = {0: "", 1: ""}
    for event in events:
        if isinstance(event, ColumnEvent) and isinstance(event.event, TextDelta):
            texts[event.column] += event.event.text
    assert texts == {0: "Four.", 1: "It is 4."}
    saved = [e for e in events if isinstance(e, EntriesSaved)]
    assert sorted(e.id for s in saved for e in s.entries) == sorted(
        e.id for c in result.columns for e in c.entries
    )
    # each column's entries are told right after its end, the position last
    for finished in (e for e in events if isinstance(e, ColumnFinished)):
        after = events[events.index(finished) + 1]
        assert isinstance(after, EntriesSaved) and after.entries == finished.result.entries
    assert events[-1] == PositionMoved(result.columns[0].reply.id, False)
    assert asked.leaf_id == result.columns[0].reply.id
    assert [c.entries[0].payload for c in result.columns] == [
        ModelChange(m, "low", fake_provider.base_url) for m in MODELS[:2]
    ]
    assert conversation.session_totals.usage.output_tokens == 12
