"""The message input: sending, newlines, slash commands, $EDITOR, big pastes."""

from __future__ import annotations

import os
import sys
from contextlib import nullcontext
from pathlib import Path

from textual import events

from tests.tui.helpers import app_of, notifications, running, screen_text, send, settle, type_text
from tui.widgets.prompt_input import PromptInput


def prompt(pilot) -> PromptInput:
    return pilot.app.screen.query_one(PromptInput)


def user_texts(pilot) -> list[str]:
    path = app_of(pilot).conversation.session.path
    return [e.message.text for e in path if e.message is not None and e.message.role == "user"]


async def test_enter_sends_and_clears_the_input() -> None:
    async with running([]) as pilot:
        await send(pilot, "hello there")
        assert user_texts(pilot) == ["hello there"]
        assert prompt(pilot).text == ""
        roles = [e.message.role for e in app_of(pilot).conversation.session.path if e.message]
        assert roles == ["user", "assistant"]


async def test_newline_keys_insert_a_newline_instead_of_sending() -> None:
    async with running([]) as pilot:
        await type_text(pilot, "one")
        await pilot.press("ctrl+j")
        await type_text(pilot, "two")
        await pilot.press("alt+enter")
        await type_text(pilot, "three")
        assert prompt(pilot).text == "one\ntwo\nthree"
        assert user_texts(pilot) == []
        await pilot.press("enter")
        await settle(pilot)
        assert user_texts(pilot) == ["one\ntwo\nthree"]


async def test_empty_draft_sends_nothing() -> None:
    async with running([]) as pilot:
        await pilot.press("enter")
        await settle(pilot)
        assert app_of(pilot).conversation.session.path == []


async def test_slash_command_completes_with_tab() -> None:
    async with running([]) as pilot:
        await type_text(pilot, "/ti")
        assert prompt(pilot).suggestion == "tle "
        assert "Rename this session" in screen_text(pilot), "the matching commands are listed"
        await pilot.press("tab")
        assert prompt(pilot).text == "/title "


async def test_model_names_complete_after_slash_model() -> None:
    home = Path(os.environ["TANGENTS_HOME"])
    (home / "config.toml").write_text(
        '[[endpoints]]\nname = "local"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["llama3.1-8b"]\n'
    )
    async with running([]) as pilot:
        await type_text(pilot, "/model ")
        await settle(pilot)  # the model list loads in a thread the first time
        await type_text(pilot, "local/ll")
        assert prompt(pilot).suggestion == "ama3.1-8b"
        await pilot.press("tab", "enter")
        assert app_of(pilot).conversation.model == "local/llama3.1-8b"


async def test_title_command_renames_the_session() -> None:
    async with running([]) as pilot:
        await send(pilot, "first")
        prompt(pilot).post_message(
            events.Paste("/title My [bold]trip[/bold] \x1b]0;pwned\x07plans")
        )
        await pilot.press("enter")
        await settle(pilot)
        session = app_of(pilot).conversation.session
        assert session.title == "My [bold]trip[/bold] plans"
        assert prompt(pilot).text == ""
        assert "Renamed to: My [bold]trip[/bold] plans" in notifications(pilot)
        assert user_texts(pilot) == ["first"], "a command is not a message"


async def test_system_command_applies_to_the_next_message() -> None:
    async with running([]) as pilot:
        await send(pilot, "/system Answer in French.")
        await send(pilot, "hello")
        path = app_of(pilot).conversation.session.path
        systems = [
            e.message.text for e in path if e.message is not None and e.message.role == "system"
        ]
        assert systems == ["Answer in French."]
        await send(pilot, "/system")
        assert "System prompt: Answer in French." in notifications(pilot)


async def test_model_command_switches_the_model_for_the_next_message() -> None:
    async with running([]) as pilot:
        await send(pilot, "/model openai/gpt-4o")
        assert app_of(pilot).conversation.model == "openai/gpt-4o"
        assert "openai/gpt-4o" in screen_text(pilot)
        assert app_of(pilot).conversation.session.path == [], (
            "nothing is written until a message is sent"
        )


async def test_unknown_command_keeps_the_draft() -> None:
    async with running([]) as pilot:
        await send(pilot, "/frobnicate now")
        assert prompt(pilot).text == "/frobnicate now"
        assert any("Unknown command /frobnicate" in n for n in notifications(pilot))


async def test_double_slash_sends_a_message_starting_with_slash() -> None:
    async with running([]) as pilot:
        await send(pilot, "//etc/hosts is a file")
        assert user_texts(pilot) == ["/etc/hosts is a file"]


async def test_help_and_quit_commands() -> None:
    async with running([]) as pilot:
        await send(pilot, "/help")
        assert type(pilot.app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        await send(pilot, "/quit")
        assert not pilot.app.is_running


async def test_editor_edits_the_draft(tmp_path, monkeypatch) -> None:
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\np = sys.argv[1]\ntext = open(p).read()\nopen(p, 'w').write(text.upper() + '\\nedited\\n')\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    async with running([]) as pilot:
        monkeypatch.setattr(pilot.app, "suspend", nullcontext)  # headless terminals cannot suspend
        await type_text(pilot, "draft")
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert prompt(pilot).text == "DRAFT\nedited"
        assert user_texts(pilot) == []


async def test_editor_failure_keeps_the_draft(monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", "false")
    monkeypatch.delenv("VISUAL", raising=False)
    async with running([]) as pilot:
        monkeypatch.setattr(pilot.app, "suspend", nullcontext)
        await type_text(pilot, "keep me")
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert prompt(pilot).text == "keep me"
        assert any("draft is unchanged" in n for n in notifications(pilot))


async def test_no_editor_set_says_how_to_set_one(monkeypatch) -> None:
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    async with running([]) as pilot:
        await type_text(pilot, "keep me")
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert prompt(pilot).text == "keep me"
        assert any("$EDITOR" in n for n in notifications(pilot))


async def test_a_one_megabyte_paste_is_held_aside_and_sent_whole() -> None:
    big = "\n".join(f"line {i} " + "x" * 40 for i in range(21_000))
    assert len(big) > 1_000_000
    async with running([]) as pilot:
        await type_text(pilot, "see:")
        pilot.app.screen.query_one(PromptInput).post_message(events.Paste(big))
        await pilot.pause()
        shown = prompt(pilot).text
        assert shown.startswith("see:[paste #1: 21,000 lines,") and len(shown) < 100
        await type_text(pilot, "ok")
        await pilot.press("enter")
        await settle(pilot)
        assert user_texts(pilot) == ["see:" + big + "ok"]


async def test_a_one_megabyte_single_line_paste_does_not_reach_the_text_area() -> None:
    async with running([]) as pilot:
        prompt(pilot).post_message(events.Paste("word " * 200_000))
        await pilot.pause()
        assert len(prompt(pilot).text) < 100
        await type_text(pilot, "!")
        assert prompt(pilot).draft.endswith("word !")


async def test_pasted_text_is_stripped_of_terminal_sequences() -> None:
    async with running([]) as pilot:
        prompt(pilot).post_message(events.Paste("red \x1b[31mtext\x1b[0m \x1b]52;c;aGk=\x07done"))
        await pilot.pause()
        assert prompt(pilot).text == "red text done"


async def test_keys_typed_ahead_of_enter_are_all_sent() -> None:
    """Keys arrive in bursts (fast typing, tmux send-keys): Enter must not overtake them."""
    async with running([]) as pilot:
        for char in "hello":
            pilot.app.post_message(events.Key(char, char))
        pilot.app.post_message(events.Key("enter", "\r"))
        for char in "x":
            pilot.app.post_message(events.Key(char, char))
        pilot.app.post_message(events.Key("ctrl+j", "\n"))
        await settle(pilot)
        assert user_texts(pilot) == ["hello"]
        assert prompt(pilot).text == "x\n"


async def test_typed_letters_do_not_ask_the_screen_for_its_bindings(monkeypatch) -> None:
    """Working out every binding of the focused chain took ~150 µs a key; a
    letter is none of the input's keys, so nothing needs working out. Enter,
    one of them, still sends."""
    from textual.screen import Screen

    asked: list[int] = []
    active = Screen.active_bindings

    def counted(screen):
        asked.append(1)
        return active.fget(screen)

    async with running([]) as pilot:
        await settle(pilot)
        monkeypatch.setattr(Screen, "active_bindings", property(counted))
        await type_text(pilot, "hello")
        await settle(pilot)
        typed = len(asked)
        await send(pilot, "")
        assert user_texts(pilot) == ["hello"]
    assert typed == 0 and asked
