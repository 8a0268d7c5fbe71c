"""Bindings: every action has an id, a description, a place in help and in the
command palette, and can be remapped from the config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_provider import Fail, Reply

from tests.tui.helpers import app_of, running, screen_text, settle, type_text
from tui import keymap
from tui.chat.chat_screen import ChatScreen
from tui.chat.commands import ActionCommands
from tui.chat.help_screen import HelpScreen
from tui.cli import build_parser, main
from tui.modes.app import TangentsApp
from tui.modes.bootstrap import UsageError
from tui.modes.launch import prepare_launch
from tui.screens.approval import ApprovalScreen
from tui.screens.compare import CompareScreen
from tui.screens.dialogs import Confirm
from tui.screens.model_picker import ModelPicker
from tui.screens.sessions import SessionPicker
from tui.screens.tree import TreeScreen
from tui.widgets.chat_view import ChatView
from tui.widgets.file_card import FileCard
from tui.widgets.markers import SummaryMarker
from tui.widgets.message_widget import MessageWidget
from tui.widgets.prompt_input import PromptInput
from tui.widgets.thinking_block import ThinkingBlock
from tui.widgets.tool_call_card import ToolCallCard

ROOT = Path(__file__).resolve().parents[2]


def write_config(text: str) -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(text)


def test_every_action_is_bound_with_its_id_and_description() -> None:
    bound = {}
    for cls in (
        TangentsApp,
        ChatScreen,
        PromptInput,
        HelpScreen,
        ModelPicker,
        SessionPicker,
        TreeScreen,
        CompareScreen,
        Confirm,
        ApprovalScreen,
        ChatView,
        FileCard,
        SummaryMarker,
        MessageWidget,
        ThinkingBlock,
        ToolCallCard,
    ):
        for binding in cls.BINDINGS:
            bound.setdefault(binding.id, binding)
    for action in keymap.ACTIONS:
        binding = bound[action.id]
        assert binding.description == action.description and binding.description
        assert binding.key == action.keys


def test_ids_are_unique_and_valid_toml_keys() -> None:
    ids = [a.id for a in keymap.ACTIONS]
    assert len(ids) == len(set(ids))
    assert all(i.replace("_", "").isalnum() for i in ids)


def test_markdown_table_is_generated_from_the_registry() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tui.keymap", "--markdown"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout == keymap.markdown_table()
    for action in keymap.ACTIONS:
        assert f"| `{action.id}` |" in result.stdout


async def test_help_screen_lists_every_action_and_command() -> None:
    async with running([], size=(120, 160)) as pilot:  # tall enough for the whole list
        await pilot.press("f1")
        assert isinstance(pilot.app.screen, HelpScreen)
        text = screen_text(pilot)
        for action in keymap.ACTIONS:
            assert action.description in text, action.id
        for name in ("/model", "/system", "/image", "/title", "/help", "/quit"):
            assert name in text
        await pilot.press("escape")
        assert isinstance(pilot.app.screen, ChatScreen)


async def test_f1_toggles_help() -> None:
    async with running([]) as pilot:
        await pilot.press("f1")
        await pilot.press("f1")
        assert isinstance(pilot.app.screen, ChatScreen)


async def test_command_palette_offers_every_palette_action() -> None:
    async with running([]) as pilot:
        screen = pilot.app.screen
        provider = ActionCommands(screen)
        offered = [hit.text for hit in [h async for h in provider.discover()]]
        expected = [
            a.description
            for a in keymap.ACTIONS
            if a.palette and a.scope in ("app", "chat", "input")
        ]
        assert offered == expected


async def test_command_palette_runs_an_action() -> None:
    async with running([]) as pilot:
        before = pilot.app.screen.show_thinking
        await pilot.press("ctrl+p")
        await type_text(pilot, "hide thinking")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert pilot.app.screen.show_thinking is not before


async def test_keymap_from_config_remaps_keys() -> None:
    write_config('[keymap]\nsend = "ctrl+s"\nhelp = "f2"\n')
    async with running([]) as pilot:
        await type_text(pilot, "one")
        await pilot.press("enter")
        await type_text(pilot, "two")
        assert pilot.app.screen.query_one(PromptInput).text == "one\ntwo", (
            "enter is a plain newline now"
        )
        await pilot.press("ctrl+s")
        await settle(pilot)
        path = app_of(pilot).conversation.session.path
        assert [e.message.text for e in path if e.message and e.message.role == "user"] == [
            "one\ntwo"
        ]
        await pilot.press("f2")
        assert isinstance(pilot.app.screen, HelpScreen)
        assert "ctrl+s" in screen_text(pilot)


async def test_a_message_key_is_remapped_by_its_id_as_written_in_toml() -> None:
    write_config('[keymap]\nchat_previous_message = "k"\n')
    async with running([]) as pilot:
        for text in ("first", "second"):
            await type_text(pilot, text)
            await pilot.press("enter")
            await settle(pilot)
        await pilot.press("ctrl+up")
        last = pilot.app.focused
        await pilot.press("k")
        assert pilot.app.focused.entry.id == last.entry.parent_id, "k moved to the message before"


def test_unknown_keymap_ids_are_a_start_up_error(capsys) -> None:
    write_config('[keymap]\nsned = "ctrl+s"\n')
    with pytest.raises(UsageError, match="unknown action"):
        prepare_launch(build_parser().parse_args([]))
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "sned" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        ('send = "entr"', 'keymap.send: "entr" is not a key'),
        ('send = "ctrl+s,"', "keymap.send: an empty key"),
        ('help = "cmd+h"', 'keymap.help: "cmd+h" is not a key'),
        ('help = "ctrl+ctrl+h"', 'keymap.help: "ctrl+ctrl+h" is not a key'),
    ],
)
def test_a_keymap_entry_that_is_not_a_key_is_refused(entry, line, capsys) -> None:
    """Enter stopped sending when ``send`` named a key no terminal has."""
    write_config(f"[keymap]\n{entry}\n")
    with pytest.raises(UsageError, match="not a key|empty key"):
        prepare_launch(build_parser().parse_args([]))
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and line in err, err


def test_keys_as_textual_names_them_are_accepted() -> None:
    keys = "ctrl+s f2 k ? alt+question_mark shift+tab left_square_bracket ctrl+shift+up space"
    assert [key for key in keys.split() if not keymap.is_key(key)] == []
    assert keymap.problems({"send": "ctrl+s, f2"}) == []


def test_keymap_and_config_problems_are_listed_together(capsys) -> None:
    write_config('retries = -1\n[keymap]\nsend = "entr"\nsned = "ctrl+s"\n')
    assert main([]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(": ")[2] for line in lines] == ["retries", "keymap.send", "keymap.sned"]


async def test_command_palette_runs_an_input_action() -> None:
    async with running([]) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("ctrl+p")
        await type_text(pilot, "send the message")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        path = app_of(pilot).conversation.session.path
        assert [e.message.text for e in path if e.message and e.message.role == "user"] == ["hi"]


async def test_a_failed_replys_hint_names_the_retry_key_and_that_key_retries(
    fake_provider, fake_args
) -> None:
    """The hint once said "press r", which types an r; it names the bound key, remapped too."""
    write_config('[keymap]\nretry = "f5"\n')
    fake_provider.script(*[Fail(500, retry_after=0) for _ in range(4)], Reply(text="Recovered."))
    async with running(fake_args) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await settle(pilot)
        assert "press f5 to retry" in screen_text(pilot)
        await pilot.press("f5")
        await settle(pilot)
        assert "Recovered." in screen_text(pilot)
