"""Every summary request says how long its answer may be, sized from the
window (issue 32): at most a quarter of it and never more than the kept
tail's budget. A small local model the price table does not know otherwise
writes summaries that fill the window they were meant to free."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_local_server import LocalServer

from core.chat.branch_summary import summarize_branch
from core.chat.target import summarizer_for, target_for
from core.compaction.run import CompactionError, budget, compact
from core.compaction.summarizer import Summarizer
from core.sessions.messages import user_text
from core.sessions.session import Session
from core.settings import Settings
from storage import SqliteStore
from tests.compaction.builders import assistant
from tests.fake_provider import FakeProvider

MODEL = "openai/smollm2"
WORDS = "the garden by the sea has cats and a long wall of old stones "


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    store = await SqliteStore.open(tmp_path / "t.db")
    yield store
    await store.close()


async def chatted(store: SqliteStore, turns: int, words: int) -> Session:
    session = await Session.create(store, cwd="/")
    for i in range(turns):
        text = f"question {i} " + WORDS * words
        await session.append_many([user_text(text), assistant("answer " + text)])
    return session


def local(server: FakeProvider, settings: Settings) -> Summarizer:
    """The conversation's own model summarises, on the local server."""
    return summarizer_for(MODEL, target_for(MODEL, settings, server.base_url + "/v1"), settings)


@pytest.mark.parametrize("window", [2_048, 4_096])
async def test_compaction_summaries_carry_a_bounded_max_tokens(
    store: SqliteStore, window: int
) -> None:
    settings = Settings(context_windows={MODEL: window})
    session = await chatted(store, 8, window // 100)
    with FakeProvider(local=LocalServer("llama-cpp-python", window)) as server:
        await compact(session, settings, model=MODEL, summarizer=local(server, settings))
        asked = [r.body.get("max_tokens") for r in server.requests]
    cap = min(window // 4, budget(MODEL, settings).keep_recent_tokens)
    assert asked and all(m is not None and 0 < m <= cap for m in asked), asked


async def test_a_branch_summary_fits_a_small_window(store: SqliteStore) -> None:
    settings = Settings(context_windows={MODEL: 2_048})
    session = await chatted(store, 2, 5)
    first_answer, last = session.path[1], session.path[-1]
    await session.move_leaf(first_answer.id)
    with FakeProvider(local=LocalServer("llama-cpp-python", 2_048)) as server:
        await summarize_branch(
            session,
            settings,
            model=MODEL,
            old_leaf_id=last.id,
            new_entry_id=first_answer.id,
            target=target_for(MODEL, settings, server.base_url + "/v1"),
        )
        (asked,) = [r.body.get("max_tokens") for r in server.requests]
    assert asked is not None and asked <= 2_048 // 4


async def test_a_summary_request_the_window_refuses_says_so_once(store: SqliteStore) -> None:
    """The window was guessed too large: llama-cpp-python ends the summary's
    stream without a word. That is the context, not a lost connection, and
    asking again cannot help."""
    settings = Settings(context_windows={MODEL: 8_192}, retries=3)
    session = await chatted(store, 12, 60)
    with FakeProvider(local=LocalServer("llama-cpp-python", 2_048)) as server:
        with pytest.raises(CompactionError) as failed:
            await compact(session, settings, model=MODEL, summarizer=local(server, settings))
        assert len(server.requests) == 1, "retried what retrying cannot fix"
    assert "context window" in str(failed.value)
    assert "could not reach" not in str(failed.value)
