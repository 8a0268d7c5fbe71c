"""A reply the context window stopped, and a context too long, say what can
help (issue 32): the window, and compacting or shortening, not "retry"."""

from __future__ import annotations

from core.chat.window_full import window_full
from tests.tui.snapshot_apps.chat_data import EntryMaker, assistant
from tests.tui.test_chat_view import ChatTestApp, screen_text


async def test_the_full_window_and_an_overflow_name_what_can_help() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(120, 40)) as pilot:
        make = EntryMaker()
        full = window_full(assistant("long", stop_reason="length"), 4_096, guessed=False)
        too_long = assistant(
            "", stop_reason="error", error="the conversation is too long for this model"
        ).with_(meta={"error_kind": "context_overflow"})
        await app.chat.set_entries([make(full), make(too_long)])
        await pilot.pause()
        text = screen_text(app)
        assert "context window (4k) is full" in text
        assert "output token limit" not in text
        assert "too long for this model · compact (/compact) or shorten the message" in text
        assert "retry" not in text
