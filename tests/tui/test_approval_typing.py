"""The approval dialog and a user who is typing (found on a walk at 80x24
with the demo: "another" typed as the dialog was up allowed write_file for
the whole session on its "a", and "nother" was lost).

A dialog that opens while the user types a message takes no answer until
the typing pauses: the keys go on into the message. Keys that come right
after an answer, before the dialog is gone, go into the message too.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual import events

from core.sessions.content import ToolCallContent
from core.tools.base import Approval
from tests.tui.helpers import app_of, running, screen_text, settle, type_text, wait_for
from tui.chat.chat_screen import ChatScreen
from tui.screens import approval
from tui.screens.approval import ApprovalScreen

ARGUMENTS = {"path": "notes.txt", "content": "hello\n"}


def write_call() -> ToolCallContent:
    return ToolCallContent("call_1", "write_file", ARGUMENTS, json.dumps(ARGUMENTS))


async def ask_approval(pilot) -> tuple[asyncio.Task[Approval], ApprovalScreen]:
    """The chat screen asks, as a reply's tool call would; the dialog once shown."""
    chat = pilot.app.screen
    assert isinstance(chat, ChatScreen)
    registry = app_of(pilot).tool_registry
    tool = registry.get("write_file")
    preview = await tool.make_preview(ARGUMENTS, registry.context())
    task = asyncio.ensure_future(chat._approve(write_call(), tool, preview))
    await wait_for(lambda: isinstance(pilot.app.screen, ApprovalScreen), pilot)
    await settle(pilot)
    return task, pilot.app.screen  # type: ignore[return-value]


def burst(pilot, text: str) -> None:
    """Keys read from the terminal at once (fast typing, tmux), none handled yet."""
    for char in text:
        pilot.app.post_message(events.Key(char, char))


def prompt_text(pilot) -> str:
    chat = next(s for s in pilot.app.screen_stack if isinstance(s, ChatScreen))
    return chat.prompt.text


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def test_keys_typed_as_the_dialog_opens_go_on_into_the_message(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "QUIET_SECONDS", 60.0)  # the typing never pauses long enough
    async with running(["--model", "demo"], size=(80, 24)) as pilot:
        await type_text(pilot, "ano")
        task, dialog = await ask_approval(pilot)
        assert not dialog.takes_answers
        assert "typing goes on into your message" in screen_text(pilot)
        burst(pilot, "ther: yes and no")
        await wait_for(lambda: prompt_text(pilot) == "another: yes and no", pilot)
        assert pilot.app.screen is dialog and not task.done()
        task.cancel()
    assert not (in_tmp / "notes.txt").exists()


async def test_once_the_typing_pauses_the_dialog_takes_its_answer(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "QUIET_SECONDS", 0.3)
    async with running(["--model", "demo"], size=(80, 24)) as pilot:
        await type_text(pilot, "note")
        # As the typing just went on: the dialog starts quiet.
        monkeypatch.setattr(ChatScreen, "typing_within", lambda self, seconds: True)
        task, dialog = await ask_approval(pilot)
        assert not dialog.takes_answers
        await wait_for(lambda: dialog.takes_answers, pilot)
        assert "y allow once" in screen_text(pilot)
        await pilot.press("y")
        assert (await asyncio.wait_for(task, 10)) == Approval("once")
        assert prompt_text(pilot) == "note"


async def test_a_dialog_that_opens_after_a_message_was_sent_answers_at_once(
    in_tmp: Path,
) -> None:
    async with running(["--model", "demo"], size=(80, 24)) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("ctrl+u")  # not typing: the input emptied by another key
        task, dialog = await ask_approval(pilot)
        assert dialog.takes_answers
        await pilot.press("n", *"not now", "enter")
        assert (await asyncio.wait_for(task, 10)) == Approval("deny", "not now")


async def test_keys_right_after_the_answer_go_into_the_message(in_tmp: Path) -> None:
    async with running(["--model", "demo"], size=(80, 24)) as pilot:
        task, dialog = await ask_approval(pilot)
        burst(pilot, "ynother")
        assert (await asyncio.wait_for(task, 10)) == Approval("once")
        await wait_for(lambda: prompt_text(pilot) == "nother", pilot)
        assert isinstance(pilot.app.screen, ChatScreen)


async def test_a_denial_typed_in_one_burst_is_sent_whole(in_tmp: Path) -> None:
    async with running(["--model", "demo"], size=(80, 24)) as pilot:
        task, dialog = await ask_approval(pilot)
        burst(pilot, "nnot now")
        pilot.app.post_message(events.Key("enter", "\r"))
        assert (await asyncio.wait_for(task, 10)) == Approval("deny", "not now")
        assert prompt_text(pilot) == ""
