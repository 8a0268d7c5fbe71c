"""The small ones of issue 33 item 10, each from the steps that showed it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.sessions.content import ToolCallContent
from tests.tui.helpers import app_of, running, screen_text, send, settle, wait_for
from tui.screens.approval import ApprovalScreen


async def test_the_approval_hint_is_whole_at_80_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was cut at 80 columns: "escape deny sil…"."""
    monkeypatch.chdir(tmp_path)
    arguments = {"path": "notes.txt", "content": "hello\n"}
    call = ToolCallContent("call_1", "write_file", arguments, json.dumps(arguments))
    async with running(["--model", "demo"], size=(80, 24)) as pilot:
        registry = app_of(pilot).tool_registry
        tool = registry.get("write_file")
        preview = await tool.make_preview(arguments, registry.context())
        await pilot.app.push_screen(ApprovalScreen(call, tool, preview, {}, lambda typed: None))
        await settle(pilot)
        text = screen_text(pilot)
        assert "deny silently ─╯" in text, text


async def test_renaming_the_open_session_in_the_picker_renames_its_header() -> None:
    """The header kept the old title after the picker renamed the open session."""
    async with running(["--model", "demo"]) as pilot:
        await send(pilot, "plant an oak")
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("ctrl+u", *"Oaks", "enter")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        title = pilot.app.screen.query_one("#chat-title")
        await wait_for(lambda: str(title.render()).startswith("Oaks"), pilot)
