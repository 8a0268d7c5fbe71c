"""A session holding one huge message opens without freezing (issue #37,
"Smaller"): the view shows a bounded head of it with a note of how much more
there is, the database keeps it whole, and the app answers keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.sessions.content import TextContent
from core.sessions.messages import Message
from core.sessions.session import Session
from storage import SqliteStore
from tests.tui.helpers import app_of, running, screen_text
from tui.widgets.prompt_input import PromptInput

LINE = "lorem ipsum dolor sit amet " * 4 + "\n"
HUGE = LINE * (60_000_000 // len(LINE)) + "THE VERY END"


async def session_with(db: Path, role: str) -> str:
    """A session: a question, a 60 MB message from ``role``, a last question."""
    store = await SqliteStore.open(db)
    try:
        session = await Session.create(store)
        await session.append(Message(role="user", content=(TextContent("paste this"),)))
        await session.append(Message(role=role, content=(TextContent(HUGE),)))  # type: ignore[arg-type]
        await session.append(Message(role="user", content=(TextContent("what now?"),)))
        return session.id
    finally:
        await store.close()


@pytest.mark.parametrize("role", ["user", "assistant"])
async def test_a_60_mb_message_shows_a_bounded_head_and_the_app_answers_keys(
    tmp_path: Path, role: str
) -> None:
    db = tmp_path / "huge.db"
    session_id = await session_with(db, role)
    async with running(["--db", str(db), "--session", session_id, "-m", "demo"]) as pilot:
        shown = screen_text(pilot)
        assert "what now?" in shown
        assert "MB more" in shown and "/export" in shown, shown
        await pilot.press("o", "k")
        assert pilot.app.screen.query_one(PromptInput).text == "ok"
        path = app_of(pilot).conversation.session.path
        assert path[-2].message is not None and path[-2].message.text == HUGE
