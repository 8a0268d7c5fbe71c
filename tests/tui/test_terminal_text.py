"""Bidi controls, C1 characters and lone carriage returns in anything the chat
view shows (replies, thinking, tool names and results, notes, errors) appear as
visible markers or line breaks, never raw."""

from __future__ import annotations

from textual.widgets import Markdown

from core.sessions.content import ToolCallContent
from tests.tui.snapshot_apps.chat_data import (
    EntryMaker,
    assistant,
    custom,
    model_change,
    tool_result,
    user,
)
from tests.tui.test_chat_view import ChatTestApp, screen_text
from tui.widgets.thinking_block import ThinkingBlock
from tui.widgets.tool_call_card import ToolCallCard

HOSTILE = "rm -rf ~\rls -la \u202eevil\u202c \x85\x9b2J\x9d0;t\x9c"
RAW = ["\u202e", "\u202c", "\r", "\x85", "\x9b", "\x9d", "\x9c"]


async def test_hostile_text_shows_markers_everywhere() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(120, 60)) as pilot:
        make = EntryMaker()
        call = ToolCallContent("c1", f"tool{HOSTILE}", {"path": HOSTILE})
        await app.chat.set_entries(
            [
                make(model_change(f"model{HOSTILE}")),
                make(user(f"user {HOSTILE}")),
                make(assistant(f"reply {HOSTILE}", thinking=f"thought {HOSTILE}", calls=(call,))),
                make(tool_result("c1", f"result {HOSTILE}")),
                make(custom(f"note {HOSTILE}")),
            ]
        )
        await pilot.pause()
        app.query_one(ThinkingBlock).expanded = True
        app.query_one(ToolCallCard).expanded = True
        await pilot.pause()
        text = screen_text(app)
        for prefix in ("user", "reply", "thought", "result", "note"):
            assert f"{prefix} rm -rf ~" in text, prefix
        assert "ls -la ⟨U+202E⟩evil⟨U+202C⟩" in text
        for raw in RAW:
            assert raw not in text, repr(raw)
        for markdown in app.query(Markdown):
            assert not any(raw in markdown.source for raw in RAW)
        card = app.query_one(ToolCallCard)
        assert not any(raw in card.result_text for raw in RAW)
