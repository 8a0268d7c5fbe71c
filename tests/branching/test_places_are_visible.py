"""Modes and places are visible (issue 12): the title and branch count above the
chat, Home/End moving the focus, the tree opening on the current entry, a tree
jump to a question becoming an edit, Enter on a reply's thinking, the branch
summary question once per branch left, key names, [keymap] conflicts, the theme."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_provider import Reply
from textual.color import Color

from core.settings import read_state
from tests.branching.chat_steps import chat, entry_with, focus, texts, whole_tree, write_config
from tests.tui.helpers import app_of, running, screen_text, settle, type_text
from tui import keymap
from tui.chat.chat_screen import ChatScreen
from tui.cli import build_parser, main
from tui.modes.bootstrap import UsageError
from tui.modes.launch import prepare_launch
from tui.screens.dialogs import Confirm
from tui.screens.tree import TreeScreen, TreeView
from tui.widgets.prompt_input import PromptInput
from tui.widgets.thinking_block import ThinkingBlock


def prompt(pilot) -> PromptInput:
    return pilot.app.screen.query_one(PromptInput)


async def test_the_title_and_branch_count_show_above_the_chat(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        assert screen_text(pilot).splitlines()[0].strip() == "New session"
        await chat(pilot, fake_provider, ("plan a trip", "ok"))
        await focus(pilot, "ok")
        fake_provider.script(Reply(text="ok again"))
        await pilot.press("alt+r")
        await settle(pilot)
        assert screen_text(pilot).splitlines()[0].strip() == "plan a trip · 2 branches"


async def test_home_and_end_move_the_focus(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"), ("q3", "a3"))
        await focus(pilot, "a2")
        await pilot.press("home")
        await settle(pilot)
        assert pilot.app.focused is pilot.app.screen.chat_view.message_widgets[0]
        await pilot.press("end")
        await settle(pilot)
        assert pilot.app.focused.entry.message.text == "a3"


async def test_the_focused_message_is_tinted_under_its_text_too(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        a1 = entry_with(pilot, "a1").id
        reply = next(w for w in pilot.app.screen.chat_view.message_widgets if w.entry_id == a1)

        def painted() -> Color:
            """The background on screen under the reply's words."""
            for strip in pilot.app.screen._compositor.render_strips():
                line = "".join(segment.text for segment in strip)
                words = line.strip()
                if words.endswith("a1") and len(words) <= 3:  # (after the focus outline)
                    x = line.rindex("a1")
                    cropped = list(strip.crop(x, x + 1))
                    assert cropped[0].style is not None and cropped[0].style.bgcolor is not None
                    return Color.from_rich_color(cropped[0].style.bgcolor)
            raise AssertionError("the reply's words are not on screen")

        unfocused = painted()
        await focus(pilot, "a1")
        assert painted() == reply.background_colors[1] != unfocused
        await pilot.press("escape")
        await settle(pilot)
        assert painted() == unfocused


async def test_the_tree_opens_scrolled_to_the_current_entry(fake_provider, fake_args) -> None:
    async with running(fake_args, size=(80, 24)) as pilot:
        await chat(pilot, fake_provider, *[(f"q{i}", f"a{i}") for i in range(20)])
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TreeScreen)
        view = pilot.app.screen.query_one(TreeView)
        assert view.current_row.preview == "a19"
        top = view.scroll_offset.y
        assert top <= view.cursor < top + view.size.height
        assert "a19" in screen_text(pilot)


async def test_a_tree_jump_to_a_question_edits_it(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await pilot.press("ctrl+g")
        await settle(pilot)
        view = pilot.app.screen.query_one(TreeView)
        view.cursor = next(i for i, r in enumerate(view.rows) if r.preview == "q2")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert prompt(pilot).text == "q2" and prompt(pilot).has_focus
        assert "editing message 3" in screen_text(pilot)
        assert texts(pilot) == ["q1", "a1"]
        fake_provider.script(Reply(text="a2 other"))
        await pilot.press("end", "space", "x", "enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2 x", "a2 other"]  # never two questions in a row
        tree = await whole_tree(pilot)
        edited = entry_with(pilot, "q2 x")
        assert [tree.entry(i).message.text for i in tree.alternatives(edited.id)] == ["q2", "q2 x"]


async def test_enter_on_a_focused_reply_toggles_its_thinking(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        fake_provider.script(Reply(thinking="Let me think about it.", text="a1"))
        await type_text(pilot, "q1")
        await pilot.press("enter")
        await settle(pilot)
        await focus(pilot, "a1")
        block = pilot.app.screen.query_one(ThinkingBlock)
        assert not block.expanded
        await pilot.press("enter")
        await settle(pilot)
        assert block.expanded
        assert texts(pilot) == ["q1", "a1"]  # and nothing was edited or sent


async def test_the_summary_question_comes_once_per_branch_left(fake_provider, fake_args) -> None:
    write_config("ask")
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        await focus(pilot, "q1")
        await pilot.press("enter", "end", "space", "x")
        fake_provider.script(Reply(text="a1 x"))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, Confirm)  # the edit leaves q1 and a1
        await pilot.press("n")
        await settle(pilot)
        assert texts(pilot) == ["q1 x", "a1 x"]
        asked = 0
        for text, key in (("q1 x", "left"), ("q1", "right"), ("q1 x", "left"), ("q1", "right")):
            await focus(pilot, text)
            await pilot.press(key)
            await settle(pilot)
            if isinstance(pilot.app.screen, Confirm):
                asked += 1
                await pilot.press("n")
                await settle(pilot)
        # Leaving "q1 x" is asked once; leaving "q1" was already asked when the edit left it.
        assert asked == 1


def test_key_names_are_written_as_a_person_writes_them() -> None:
    assert keymap.display_keys("left_square_bracket,right_square_bracket") == "[, ]"
    assert keymap.key_name("alt+question_mark") == "alt+?"
    assert keymap.key_name("ctrl+j") == "ctrl+j"


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ('copy_message = "ctrl+q"', "quit"),
        ('toggle_thinking = "ctrl+k"', "message input"),
        ('open_tree = "ctrl+o"', "sessions"),
    ],
)
def test_a_conflicting_key_is_refused_at_start_in_one_line(config, named, capsys) -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(f"[keymap]\n{config}\n")
    with pytest.raises(UsageError, match=named):
        prepare_launch(build_parser().parse_args([]))
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err


async def test_a_remapped_chat_key_works_from_the_input() -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(
        '[keymap]\ntoggle_thinking = "f2"\n'
    )
    async with running([]) as pilot:
        assert prompt(pilot).has_focus
        before = pilot.app.screen.show_thinking
        await pilot.press("f2")
        assert pilot.app.screen.show_thinking is not before


async def test_the_chosen_theme_is_remembered() -> None:
    async with running([]) as pilot:
        app_of(pilot).theme = "nord"
        await settle(pilot)
    assert read_state()["theme"] == "nord"
    async with running([]) as pilot:
        assert app_of(pilot).theme == "nord"
