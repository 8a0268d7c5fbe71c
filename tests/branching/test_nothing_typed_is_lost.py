"""What a person types is never lost or misread (issue 12), each test written
from the steps that lost it: typing while a message is focused, Esc while a
branch summary is written, an edit whose input was cleared, undoing "branch
here", and Enter while a reply streams."""

from __future__ import annotations

from fake_provider import Reply, Stall
from textual import events

from tests.branching.chat_steps import (
    chat,
    entry_with,
    focus,
    session,
    stored_path,
    texts,
    whole_tree,
    write_config,
)
from tests.tui.helpers import notifications, running, screen_text, settle, type_text, wait_for
from tui.chat.chat_screen import ChatScreen
from tui.chat.help_screen import HelpScreen
from tui.screens.dialogs import Confirm
from tui.screens.tree import TreeView
from tui.widgets.footer import StatusFooter
from tui.widgets.prompt_input import PromptInput


def prompt(pilot) -> PromptInput:
    return pilot.app.screen.query_one(PromptInput)


async def test_a_sentence_typed_on_a_focused_message_goes_whole_to_the_input(
    fake_provider, fake_args
) -> None:
    async with running(fake_args) as pilot:
        await pilot.press("ctrl+n")
        await settle(pilot)
        await chat(pilot, fake_provider, ("hi", "hello"))
        await pilot.press("ctrl+up", "up")
        await settle(pilot)
        assert pilot.app.focused is not prompt(pilot)
        await type_text(pilot, "what about cats")
        await settle(pilot)
        assert prompt(pilot).text == "what about cats"
        assert prompt(pilot).has_focus
        assert texts(pilot) == ["hi", "hello"]
        assert "continuing from" not in screen_text(pilot)
        assert pilot.app.clipboard == ""


async def test_a_paste_on_a_focused_message_goes_to_the_input(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("hi", "hello"))
        await focus(pilot, "hello")
        pilot.app.post_message(events.Paste("a pasted question"))  # as the driver does
        await settle(pilot)
        assert prompt(pilot).text == "a pasted question"
        assert prompt(pilot).has_focus


async def test_sentences_starting_with_action_letters_are_typed(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("hi", "hello"))
        for sentence in ("edit", "branch", "copy", "regenerate", "label", "fork", "Copy", "Redo"):
            await focus(pilot, "hello")
            await type_text(pilot, sentence)
            await settle(pilot)
            assert prompt(pilot).text == sentence
            await pilot.press("ctrl+u")
        assert texts(pilot) == ["hi", "hello"]
        stored = await session(pilot).store.entries(session(pilot).id)
        assert [e.message.text for e in stored if e.message is not None] == ["hi", "hello"]
        assert pilot.app.clipboard == ""


async def test_what_next_and_enter_on_a_focused_question_sends_a_follow_up(
    fake_provider, fake_args
) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("hi", "hello"))
        await focus(pilot, "hi")
        fake_provider.script(Reply(text="next answer"))
        await type_text(pilot, "what next")
        await pilot.press("enter")
        await settle(pilot)
        assert texts(pilot) == ["hi", "hello", "what next", "next answer"]
        tree = await whole_tree(pilot)
        assert tree.alternatives(entry_with(pilot, "hi").id) == [entry_with(pilot, "hi").id]


async def test_focus_after_each_move_is_where_the_next_key_goes(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "a1")
        await pilot.press("alt+h")  # branch here
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1"]
        assert prompt(pilot).has_focus
        await pilot.press("escape")  # undo it
        await settle(pilot)
        await focus(pilot, "a2")
        fake_provider.script(Reply(text="a2 bis"))
        await pilot.press("alt+r")  # regenerate: an alternative
        await settle(pilot)
        await focus(pilot, "a2 bis")
        await pilot.press("left")  # the alternative switch: the message keeps the focus
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2", "a2"]
        assert pilot.app.focused.entry.id == entry_with(pilot, "a2").id
        await pilot.press("right")  # so the next flip is one key, not ctrl+up ↑ → again
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2", "a2 bis"]
        assert pilot.app.focused.entry.id == entry_with(pilot, "a2 bis").id
        await pilot.press("left")
        await settle(pilot)
        await pilot.press("ctrl+g")  # the tree: jump to a reply
        await settle(pilot)
        view = pilot.app.screen.query_one(TreeView)
        view.cursor = next(i for i, r in enumerate(view.rows) if r.preview == "a1")
        await pilot.press("enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1"]
        assert prompt(pilot).has_focus
        await focus(pilot, "q1")
        await pilot.press("enter")  # edit, then send
        fake_provider.script(Reply(text="a1 new"))
        await pilot.press("end", "space", "x", "enter")
        await settle(pilot)
        assert texts(pilot) == ["q1 x", "a1 new"]
        assert prompt(pilot).has_focus


async def test_the_footer_shows_the_focused_message_keys(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        footer = pilot.app.screen.query_one(StatusFooter)
        assert "help" in str(footer.render())
        await focus(pilot, "q1")
        shown = str(footer.render())
        for words in ("edit", "branch", "alternatives", "label", "copy", "fork", "esc back"):
            assert words in shown, (words, shown)
        await pilot.press("escape")
        await settle(pilot)
        assert prompt(pilot).has_focus
        assert "esc back" not in str(footer.render())


async def test_escape_during_the_branch_summary_still_sends_the_edited_message(
    fake_provider, fake_args
) -> None:
    write_config("ask")
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "q2")
        await pilot.press("enter")  # edit
        assert prompt(pilot).text == "q2"
        await pilot.press("end", "space", "b", "i", "s", "enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, Confirm)
        assert "sending “q2 bis” after the branch summary" in screen_text(pilot)  # not lost
        fake_provider.script(Stall(30, reply=Reply(text="never seen")), Reply(text="a2 bis"))
        await pilot.press("y")
        await wait_for(lambda: "summarizing the branch" in screen_text(pilot), pilot, timeout=30)
        await pilot.press("escape")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2 bis", "a2 bis"]
        assert "branch_summary" not in [e.type for e in session(pilot).path]
        assert prompt(pilot).text == ""
        assert "sending" not in screen_text(pilot)


async def test_clearing_the_input_keeps_the_edit(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await type_text(pilot, "half a thought")  # a draft, set aside by the edit
        await focus(pilot, "q2")
        await pilot.press("enter")
        assert prompt(pilot).text == "q2"
        await pilot.press("ctrl+u")
        await settle(pilot)
        assert "editing message 3 · esc cancels" in screen_text(pilot)
        fake_provider.script(Reply(text="a2 new"))
        await type_text(pilot, "q2 new")
        await pilot.press("enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2 new", "a2 new"]
        tree = await whole_tree(pilot)
        alternatives = tree.alternatives(entry_with(pilot, "q2 new").id)
        assert [tree.entry(i).message.text for i in alternatives] == ["q2", "q2 new"]
        assert prompt(pilot).text == "half a thought"  # back once the edit is sent


async def test_sending_an_empty_input_cancels_the_edit(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        await focus(pilot, "q1")
        await pilot.press("enter", "ctrl+u", "enter")
        await settle(pilot)
        assert "editing" not in screen_text(pilot)
        assert texts(pilot) == ["q1", "a1"]


async def test_an_unchanged_edit_creates_nothing(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        requests = len(fake_provider.requests)
        await focus(pilot, "q1")
        await pilot.press("enter", "enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1"]
        assert len(fake_provider.requests) == requests
        assert len((await whole_tree(pilot)).alternatives(entry_with(pilot, "q1").id)) == 1


async def test_escape_undoes_branch_here(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "a1")
        await pilot.press("alt+h")
        await settle(pilot)
        assert "continuing from “a1”" in screen_text(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert "continuing from" not in screen_text(pilot)
        assert texts(pilot) == ["q1", "a1", "q2", "a2"]
        assert await stored_path(pilot) == ["q1", "a1", "q2", "a2"]


async def test_enter_while_a_reply_streams_queues_the_message(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        # The stream stops half-way for a while: the reply is still being written.
        fake_provider.script(Stall(6, after_chunks=5, reply=Reply(text="word " * 200)))
        await type_text(pilot, "q1")
        await pilot.press("enter")
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        await wait_for(
            lambda: screen.replying and "word word" in screen_text(pilot), pilot, timeout=30
        )
        fake_provider.script(Reply(text="a2"))
        await type_text(pilot, "q2")
        await pilot.press("enter")
        await wait_for(lambda: "queued q2" in screen_text(pilot), pilot, timeout=30)
        assert prompt(pilot).text == ""
        await settle(pilot)
        assert texts(pilot)[0] == "q1" and texts(pilot)[2:] == ["q2", "a2"]
        assert "queued" not in screen_text(pilot)


async def test_an_edit_sent_while_a_reply_streams_stays_an_edit(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        fake_provider.script(
            Stall(30, after_chunks=5, reply=Reply(text="word " * 200)), Reply(text="a1 bis")
        )
        await type_text(pilot, "q2")
        await pilot.press("enter")
        screen = pilot.app.screen
        await wait_for(
            lambda: screen.replying and "word word" in screen_text(pilot), pilot, timeout=30
        )
        await screen.chat_view.focus_entry(entry_with(pilot, "q1").id)  # the reply still streams
        await pilot.press("enter")
        assert prompt(pilot).text == "q1"
        await pilot.press("end", "space", "x", "enter")
        await wait_for(lambda: "queued (edit) q1 x" in screen_text(pilot), pilot, timeout=30)
        assert "editing message" not in screen_text(pilot)
        await pilot.press("escape")  # stop the reply: the edit is sent, as an edit
        await settle(pilot)
        assert texts(pilot) == ["q1 x", "a1 bis"]
        tree = await whole_tree(pilot)
        alternatives = tree.alternatives(entry_with(pilot, "q1 x").id)
        assert [tree.entry(i).message.text for i in alternatives] == ["q1", "q1 x"]
        assert "queued" not in screen_text(pilot) and "editing" not in screen_text(pilot)


async def test_escape_on_an_empty_input_still_stops_the_reply(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        fake_provider.script(Stall(30, after_chunks=5, reply=Reply(text="word " * 400)))
        await type_text(pilot, "q1")
        await pilot.press("enter")
        screen = pilot.app.screen
        await wait_for(
            lambda: screen.replying and "word word" in screen_text(pilot), pilot, timeout=30
        )
        await pilot.press("escape")
        await settle(pilot)
        assert not screen.replying
        assert len(texts(pilot)[1]) < len("word " * 400)


async def test_help_says_which_newline_keys_work_where(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(pilot.app.screen, HelpScreen)
        notes = str(pilot.app.screen.query_one("#help-notes").render())
        assert "ctrl+j inserts a newline in every terminal" in notes
        assert "tmux" in notes
        await pilot.press("escape")
        await type_text(pilot, "a")
        await pilot.press("ctrl+j")
        await type_text(pilot, "b")
        assert prompt(pilot).text == "a\nb"


async def test_a_jump_in_the_tree_keeps_a_half_written_edit(fake_provider, fake_args) -> None:
    """ctrl+g, Enter on another message used to drop the edit: the jump waits, and says why."""
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "q2")
        await pilot.press("enter")  # edit q2
        await settle(pilot)
        await pilot.press("end", *" and more")
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        view = pilot.app.screen.query_one(TreeView)
        view.cursor = next(i for i, r in enumerate(view.rows) if r.preview == "a1")
        await pilot.press("enter")
        await settle(pilot)
        assert prompt(pilot).text == "q2 and more"
        assert texts(pilot) == ["q1", "a1", "q2", "a2"]
        assert any("not sent" in n for n in notifications(pilot))
        await pilot.press("escape")  # the edit cancelled, nothing to keep: the jump goes
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        view = pilot.app.screen.query_one(TreeView)
        view.cursor = next(i for i, r in enumerate(view.rows) if r.preview == "a1")
        await pilot.press("enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1"]
