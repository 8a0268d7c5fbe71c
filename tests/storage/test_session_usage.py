"""Session-wide usage: one aggregate over every branch, and kept up to date as entries arrive."""

from __future__ import annotations

import pytest

from core.sessions.content import TextContent
from core.sessions.entries import Compaction, Entry
from core.sessions.messages import Message, Usage
from core.sessions.session import Session
from core.usage import SessionTotals, total_usage
from storage import SqliteStore
from tests.storage.conftest import message, new_session


def reply(text: str, input_tokens: int, output_tokens: int, cost: float, **more) -> Message:
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, input_cost=cost, **more)
    return Message(role="assistant", content=(TextContent(text),), usage=usage)


async def test_session_usage_sums_every_branch_and_compaction(store: SqliteStore) -> None:
    sid = await new_session(store)
    root = Entry.new(sid, None, message("question"))
    first = Entry.new(
        sid, root.id, reply("one", 100, 10, 0.01, cache_read_tokens=5, cache_read_cost=0.001)
    )
    await store.append(sid, [root, first], first.id)
    # A second branch: another answer to the same question, then a compaction on it.
    second = Entry.new(
        sid, root.id, reply("two", 200, 20, 0.02, cache_write_tokens=7, reasoning_tokens=3)
    )
    summary = Usage(input_tokens=1000, output_tokens=50, output_cost=0.5)
    compaction = Entry.new(
        sid, second.id, Compaction("s", root.id, 300, {"usage": summary.to_dict()})
    )
    await store.append(sid, [second, compaction], compaction.id)
    # Another session's usage is not counted.
    other = await new_session(store)
    stray = Entry.new(other, None, reply("elsewhere", 9_999, 9_999, 9.0))
    await store.append(other, [stray], stray.id)

    usage = await store.session_usage(sid)

    assert (usage.input_tokens, usage.output_tokens) == (1300, 80)
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == (5, 7, 3)
    assert usage.cost == pytest.approx(0.01 + 0.001 + 0.02 + 0.5)
    assert usage == total_usage([root, first, second, compaction])
    # The current path holds only the second branch.
    assert total_usage(await store.path(compaction.id)).input_tokens == 1200


async def test_an_empty_or_unknown_session_has_no_usage(store: SqliteStore) -> None:
    assert await store.session_usage(await new_session(store)) == Usage()
    assert await store.session_usage("no-such-session") == Usage()


async def test_session_totals_add_appended_entries_without_reading_again(
    store: SqliteStore,
) -> None:
    session = await Session.create(store)
    await session.append_many([message("q"), reply("a", 10, 1, 0.001)])
    totals = SessionTotals()
    session.on_append(totals.add)
    await session.append(reply("before loading: in the aggregate", 5, 5, 0.0))
    assert totals.usage is None
    await totals.load(store, session.id)
    assert totals.usage.input_tokens == 15
    await session.move_leaf(session.path[0].id)
    await session.append(reply("another branch", 100, 10, 0.01))
    await session.append(message("not counted: no usage"))
    assert totals.usage.input_tokens == 115 and totals.usage.output_tokens == 16
    assert totals.usage == await store.session_usage(session.id)


async def test_an_estimate_anywhere_in_the_session_marks_its_total(store: SqliteStore) -> None:
    """Issue 32: a reply counted here (its server said no usage) makes the
    session's total an estimate, as the sum in memory says."""
    sid = await new_session(store)
    root = Entry.new(sid, None, message("question"))
    counted = Entry.new(sid, root.id, reply("counted", 100, 10, 0.0))
    await store.append(sid, [root, counted], counted.id)
    assert not (await store.session_usage(sid)).estimated
    guessed = Entry.new(sid, root.id, reply("estimated", 80, 8, 0.0, estimated=True))
    await store.append(sid, [guessed], guessed.id)
    usage = await store.session_usage(sid)
    assert usage.estimated and usage.input_tokens == 180
    assert usage == total_usage([root, counted, guessed])
