"""Every hint names the real key (issue 33): each screen, dialog and note that
shows a hint is rendered in the app, every key-looking word of it is taken out,
and each must be a key the keymap binds to the action the hint describes, with
the defaults and with the config's ``[keymap]`` rebinding them."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from fake_provider import Fail, Reply
from textual.app import App
from textual.widgets import Input, Static

from core.sessions.content import TextContent, ToolCallContent, ToolResultContent
from tests.tui.helpers import app_of, running, screen_text, settle, type_text, wait_for
from tui import keymap
from tui.chat.chat_screen import ChatScreen
from tui.chat.help_screen import HelpScreen
from tui.screens.approval import ApprovalScreen
from tui.screens.compare import CompareScreen
from tui.screens.dialogs import TextPrompt
from tui.screens.info import InfoScreen
from tui.screens.model_picker import ModelPicker
from tui.screens.sessions import SessionPicker
from tui.screens.tree import TreeScreen
from tui.widgets.prompt_input import PromptInput
from tui.widgets.tool_call_card import ToolCallCard

FAKE_KEY = "sk-test-0123456789abcdefghij"

REBOUND = {
    "close": "f7",
    "stop": "f3",
    "send": "ctrl+s",
    "newline": "ctrl+j",
    "retry": "f9",
    "picker_choose": "f8",
    "branch_here": "alt+y",
    "tree_mark": "alt+k",
    "tree_choose": "f10",
    "compare_diff": "alt+d",
    "sessions_rename": "f11",
    "approve_once": "alt+o",
    "approve_send_denial": "f12",
}
"""A config that moves a key of every hint off its default."""

_KEY = re.compile(
    r"(?<![\w+])(?:(?:ctrl|alt|shift|super|meta)\+)+[^\s][^\s,:;/)·.]*"
    r"|(?<![\w+])(?:esc|escape|enter|tab|pageup|pagedown|f\d{1,2})(?![\w+])"
    r"|[←→↑↓]",
    re.IGNORECASE,
)


def named_keys(hint: str) -> list[str]:
    """Every key-looking word of ``hint``: modified keys, named keys, arrows, and
    a lone letter or digit starting a ``·``-separated part (``y allow once``)."""
    found = [m.group(0).lower().replace("escape", "esc") for m in _KEY.finditer(hint)]
    for part in hint.split(" · "):
        first = part.strip().split(" ")[0].rstrip(":")
        if len(first) == 1 and first.isalnum():
            found.append(first.lower())
    return found


def as_named(key: str) -> str:
    """A key as :func:`named_keys` gives it back (hints write ``esc`` for escape)."""
    name = keymap.key_name(key).lower()
    return "esc" if name == "escape" else name


def check(hint: str, actions: Iterable[str], overrides: Mapping[str, str]) -> None:
    """Each key ``hint`` names is one of ``actions``' keys, and each action's key is named."""
    keys = {
        action: {as_named(k) for k in keymap.keys_for(action, overrides).split(",")}
        for action in actions
    }
    named = named_keys(hint)
    bound = set().union(*keys.values())
    assert [k for k in named if k not in bound] == [], hint
    assert [a for a, k in keys.items() if not k & set(named)] == [], hint


def subtitle(screen, selector: str) -> str:
    return str(screen.query_one(selector).border_subtitle)


def shown(widget: Static) -> str:
    return str(widget.render())


@pytest.fixture(params=["defaults", "rebound"])
def overrides(request, fake_provider, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The keymap in force: the defaults, or :data:`REBOUND` from config.toml."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    chosen = REBOUND if request.param == "rebound" else {}
    lines = [
        'branch_summary = "never"',
        f'[[endpoints]]\nname = "fake"\nbase_url = "{fake_provider.base_url}/v1"\nparallel = 4',
        "[keymap]",
        *(f"{action} = {json.dumps(keys)}" for action, keys in chosen.items()),
    ]
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text("\n".join(lines) + "\n")
    return chosen


def args(fake_provider) -> list[str]:
    return ["--model", "openai/test", "--api-base", f"{fake_provider.base_url}/v1"]


async def press(pilot, key: str) -> None:
    await pilot.press(key)
    await settle(pilot)


async def test_the_chat_screen_hints(fake_provider, overrides) -> None:
    """The welcome, the input's placeholder, a focused message's footer, the
    editing note, the branch-here note and a failed reply's retry hint."""
    send_key = overrides.get("send", "enter")
    async with running(args(fake_provider), size=(120, 40)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        welcome = (
            "send",
            "newline",
            "help",
            "command_palette",
            "focus_messages",
            "chat_previous_message",
            "chat_next_message",
            "previous_alternative",
            "next_alternative",
            "branch_here",
            "pick_model",
            "quit",
        )
        check(shown(screen.query_one("#welcome", Static)), welcome, overrides)
        check(str(screen.query_one(PromptInput).placeholder), ("send", "newline"), overrides)

        fake_provider.script(Reply(text="Paris."), *[Fail(500, retry_after=0)] * 4)
        await type_text(pilot, "Capital of France?")
        await press(pilot, send_key)
        await wait_for(
            lambda: not screen.replying and len(app_of(pilot).conversation.session.path) >= 2, pilot
        )
        await type_text(pilot, "And of Spain?")
        await press(pilot, send_key)
        await wait_for(lambda: "to retry" in screen_text(pilot), pilot, timeout=30)
        [retry] = [line for line in screen_text(pilot).splitlines() if "to retry" in line]
        check(retry.split("·")[-1], ("retry",), overrides)

        await press(pilot, "ctrl+up")  # the failed reply
        await press(pilot, "up")  # the question before it
        footer = screen._message_keys()
        message_keys = (
            "edit_message",
            "previous_alternative",
            "next_alternative",
            "branch_here",
            "label_message",
            "copy_message",
            "fork_session",
            "stop",
        )
        check(footer, message_keys, overrides)

        await press(pilot, "enter")  # edit the question
        note = screen.query_one("#composer-note", Static)
        assert "editing message" in shown(note)
        check(shown(note), ("stop", "send"), overrides)
        await press(pilot, overrides.get("stop", "escape"))

        await press(pilot, "ctrl+up")
        await press(pilot, "up")
        await press(pilot, overrides.get("branch_here", "alt+h"))
        assert "continuing from" in shown(note)
        check(shown(note), ("stop",), overrides)


async def say(pilot, text: str, overrides: Mapping[str, str]) -> None:
    """Type ``text`` and press the send key in force."""
    await type_text(pilot, text)
    await press(pilot, keymap.keys_for("send", overrides).split(",")[0])


async def open_screen(pilot, key: str, kind: type):
    await press(pilot, key)
    await wait_for(lambda: isinstance(pilot.app.screen, kind), pilot)
    await settle(pilot)
    return pilot.app.screen


async def close(pilot, overrides: Mapping[str, str], action: str = "close") -> None:
    await press(pilot, keymap.keys_for(action, overrides).split(",")[0])
    await wait_for(lambda: isinstance(pilot.app.screen, ChatScreen), pilot)


async def test_the_dialog_hints(fake_provider, overrides) -> None:
    """Help, model picker, info, session picker, tree, compare and approval."""
    async with running(args(fake_provider), size=(120, 40)) as pilot:
        fake_provider.script_for("alpha", Reply(text="Paris is the capital of France."))
        fake_provider.script_for("beta", Reply(text="The capital of France is Paris."))
        await say(pilot, "/compare openai/alpha openai/beta", overrides)
        await say(pilot, "Capital of France?", overrides)
        await wait_for(lambda: isinstance(pilot.app.screen, CompareScreen), pilot, timeout=30)
        compare = pilot.app.screen
        await wait_for(lambda: not compare.streaming, pilot, timeout=30)
        await settle(pilot)
        check(
            shown(compare.query_one("#compare-hint", Static)),
            ("compare_keep", "compare_diff", "compare_label", "compare_next", "compare_close"),
            overrides,
        )
        await close(pilot, overrides, "compare_close")
        await say(pilot, "/compare off", overrides)

        help_screen = await open_screen(pilot, "f1", HelpScreen)
        check(subtitle(help_screen, "#help-body"), ("close",), overrides)
        await close(pilot, overrides)

        picker = await open_screen(pilot, "ctrl+l", ModelPicker)
        check(subtitle(picker, "#picker-body"), ("picker_choose", "close"), overrides)
        await close(pilot, overrides)

        await say(pilot, "/info", overrides)
        await wait_for(lambda: isinstance(pilot.app.screen, InfoScreen), pilot)
        check(subtitle(pilot.app.screen, "#info-body"), ("close",), overrides)
        await close(pilot, overrides)

        sessions = await open_screen(pilot, "ctrl+o", SessionPicker)
        check(
            shown(sessions.query_one("#sessions-hints", Static)),
            (
                "sessions_resume",
                "sessions_rename",
                "sessions_archive",
                "sessions_delete",
                "sessions_show_archived",
                "close",
            ),
            overrides,
        )
        await close(pilot, overrides)

        tree = await open_screen(pilot, "ctrl+g", TreeScreen)
        check(
            subtitle(tree, "#tree-body"),
            ("tree_choose", "tree_filter", "tree_mark", "tree_close"),
            overrides,
        )
        await close(pilot, overrides, "tree_close")

        registry = app_of(pilot).tool_registry
        arguments = {"path": "notes.txt", "content": "hello\n"}
        call = ToolCallContent("call_1", "write_file", arguments, json.dumps(arguments))
        approval = ApprovalScreen(
            call, registry.get("write_file"), "+hello", overrides, lambda typed: None
        )
        await pilot.app.push_screen(approval)
        await settle(pilot)
        choices = ("approve_once", "approve_session", "approve_deny", "approve_dismiss")
        check(subtitle(approval, "#approval-body"), choices, overrides)
        await press(pilot, overrides.get("approve_deny", "n"))
        message = approval.query_one("#approval-message", Input)
        check(str(message.placeholder), ("approve_send_denial",), overrides)
        await type_text(pilot, "not now")
        await press(pilot, overrides.get("approve_send_denial", "enter"))
        assert isinstance(pilot.app.screen, ChatScreen)


class _Rebound(App[None]):
    """A tool card with a long result, under a keymap that may be rebound."""

    def __init__(self, overrides: Mapping[str, str]) -> None:
        super().__init__()
        self.keymap_overrides = overrides

    def compose(self):
        call = ToolCallContent("call_1", "read_file", {"path": "a.txt"})
        long = "\n".join(f"line {n}" for n in range(60))
        yield ToolCallCard(call, ToolResultContent("call_1", (TextContent(long),)))


@pytest.mark.parametrize("chosen", [{}, {"chat_toggle_tool": "f6", "close": "f7"}])
async def test_a_tool_cards_and_a_text_prompts_hints(chosen: dict[str, str]) -> None:
    app = _Rebound(chosen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        card = app.query_one(ToolCallCard)
        check(shown(card._more), ["chat_toggle_tool"], chosen)
        answer: list[str | None] = []
        app.push_screen(TextPrompt("Label"), answer.append)
        await pilot.pause()
        hint = subtitle(app.screen, ".dialog-body").replace("enter to save · ", "")
        check(hint, ["close"], chosen)
