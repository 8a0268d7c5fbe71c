"""A stream reader shares the loop at a neutral pace: it gives the loop a turn
after each slice and awaits the pace its request carries (the front end's
policy; none by default), on every wire."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_provider import Reply

import core.providers.pacing as pacing
from core.chat.conversation import Conversation
from core.providers.pacing import LoopShare
from core.sessions.session import Session
from core.settings import Settings
from storage import SqliteStore

TEXT = " ".join(f"word{n}" for n in range(200))


class Counted:
    """A pace that only counts how often it was awaited."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self) -> None:
        self.calls += 1


async def test_a_reader_awaits_its_pace_after_each_slice_only() -> None:
    pace = Counted()
    await LoopShare(pace, slice_seconds=0).tick()
    assert pace.calls == 1
    await LoopShare(pace, slice_seconds=3600).tick()  # within its slice: reads on
    assert pace.calls == 1


async def test_the_default_pace_waits_for_nothing() -> None:
    await asyncio.wait_for(LoopShare(slice_seconds=0).tick(), 5)


async def test_every_wire_reads_at_its_request_pace(wire, monkeypatch) -> None:
    monkeypatch.setattr(pacing, "SLICE_SECONDS", 0)
    wire.server.script(Reply(text=TEXT))
    pace = Counted()
    result = await wire.run(wire.request(pace=pace))
    assert result.message.text == TEXT
    assert pace.calls > 0


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    store = await SqliteStore.open(tmp_path / "t.db")
    try:
        yield await Session.create(store, cwd=str(tmp_path))
    finally:
        await store.close()


async def test_a_conversation_reads_its_replies_at_the_pace_it_was_given(
    fake_provider, session, monkeypatch
) -> None:
    """The front end gives the pace once, in its conversation's settings
    (the app: keys first), and every request the conversation makes carries it."""
    monkeypatch.setattr(pacing, "SLICE_SECONDS", 0)
    fake_provider.script(Reply(text=TEXT))
    pace = Counted()
    conversation = Conversation(
        session,
        Settings(retries=0, pace=pace),
        default_model="openai/qwen3",
        default_thinking="off",
        api_base=fake_provider.base_url + "/v1",
    )
    result = await conversation.send("hi")
    assert result.message.text == TEXT
    assert pace.calls > 0
