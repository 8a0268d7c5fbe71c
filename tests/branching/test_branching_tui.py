"""Branching in the app, through the fake provider and a real SQLite file:
edit, regenerate, alternatives, branch here, labels, copy, fork, the tree
screen, and branch summaries."""

from __future__ import annotations

from fake_provider import Reply

from tests.branching.chat_steps import (
    bar_text,
    chat,
    entry_with,
    focus,
    session,
    stored_path,
    texts,
    whole_tree,
    write_config,
)
from tests.tui.helpers import notifications, running, screen_text, settle, type_text
from tui.chat.chat_screen import ChatScreen
from tui.screens.dialogs import Confirm, TextPrompt
from tui.screens.tree import TreeScreen, TreeView
from tui.widgets.branch_bar import BranchBar
from tui.widgets.prompt_input import PromptInput
from tui.widgets.user_message import UserMessage


async def test_edit_sends_an_alternative_and_keeps_the_old_branch(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "q2")
        await pilot.press("enter")
        await pilot.pause()  # the screen update that shows the note
        prompt = pilot.app.screen.query_one(PromptInput)
        assert prompt.text == "q2" and prompt.has_focus
        assert "editing message 3" in screen_text(pilot)
        fake_provider.script(Reply(text="a2 again"))
        await pilot.press("end", "space", "b", "i", "s", "enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2 bis", "a2 again"]
        assert "editing" not in screen_text(pilot)
        tree = await whole_tree(pilot)
        old, new = entry_with(pilot, "q2 bis"), None
        alternatives = tree.alternatives(old.id)
        assert [tree.entry(i).message.text for i in alternatives] == [
            "q2",
            "q2 bis",
        ]  # creation order
        new = tree.entry(alternatives[0])
        assert new.parent_id == old.parent_id  # a sibling: same parent
        assert [e.message.text for e in tree.branch_entries(tree.deepest_leaf(new.id), old.id)] == [
            "q2",
            "a2",
        ]
        assert await stored_path(pilot) == ["q1", "a1", "q2 bis", "a2 again"]


async def test_escape_cancels_the_edit_and_brings_back_the_draft(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        await type_text(pilot, "draft")
        await focus(pilot, "q1")
        await pilot.press("enter")
        await pilot.press("escape")
        assert pilot.app.screen.query_one(PromptInput).text == "draft"
        assert "editing" not in screen_text(pilot)
        fake_provider.script(Reply(text="a2"))
        await pilot.press("enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "draft", "a2"]


async def test_r_regenerates_any_focused_reply_as_an_alternative(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "a1")
        fake_provider.script(Reply(text="a1 again"))
        await pilot.press("alt+r")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1 again"]
        tree = await whole_tree(pilot)
        again = entry_with(pilot, "a1 again")
        assert [tree.entry(i).message.text for i in tree.alternatives(again.id)] == [
            "a1",
            "a1 again",
        ]


async def test_alternatives_show_arrows_and_left_right_switch(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        for answer in ("a1 second", "a1 third"):
            await focus(pilot, entry_text := texts(pilot)[1])
            assert entry_text.startswith("a1")
            fake_provider.script(Reply(text=answer))
            await pilot.press("alt+r")
            await settle(pilot)
        assert texts(pilot) == ["q1", "a1 third"]
        reply = pilot.app.screen.chat_view.message_widgets[-1]
        assert bar_text(reply) == "◀ 3/3 ▶"
        assert "◀ 3/3 ▶" in screen_text(pilot)
        await focus(pilot, "a1 third")
        await pilot.press("left")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1 second"]
        # the alternative keeps the focus (the next flip is one key); letters still type
        assert pilot.app.focused.entry.id == entry_with(pilot, "a1 second").id
        reply = pilot.app.screen.chat_view.message_widgets[-1]
        assert bar_text(reply) == "◀ 2/3 ▶"
        await focus(pilot, "a1 second")
        await pilot.press("left")
        await settle(pilot)
        # the first answer: the leaf goes to the newest leaf under it
        assert texts(pilot) == ["q1", "a1", "q2", "a2"]
        await focus(pilot, "a1")
        await pilot.press("left")  # no earlier alternative: nothing moves
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2", "a2"]
        await pilot.press("right")
        await settle(pilot)
        await focus(pilot, "a1 second")
        await pilot.press("right")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1 third"]
        assert await stored_path(pilot) == ["q1", "a1 third"]  # the leaf is persisted


async def test_clicking_the_arrows_switches(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        await focus(pilot, "a1")
        fake_provider.script(Reply(text="a1 bis"))
        await pilot.press("alt+r")
        await settle(pilot)
        reply = pilot.app.screen.chat_view.message_widgets[-1]
        await pilot.click(reply.query_one(BranchBar), offset=(0, 0))
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1"]
        reply = pilot.app.screen.chat_view.message_widgets[-1]
        await pilot.click(reply.query_one(BranchBar), offset=(6, 0))
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1 bis"]


async def test_click_focuses_a_message(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        user = pilot.app.screen.query_one(UserMessage)
        await pilot.click(user)
        await settle(pilot)
        assert pilot.app.focused is user


async def test_branch_here_continues_from_the_focused_message(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "a1")
        await pilot.press("alt+h")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1"]
        assert "continuing from “a1”" in screen_text(pilot)
        assert await stored_path(pilot) == ["q1", "a1"]
        await chat(pilot, fake_provider, ("q3", "a3"))
        assert texts(pilot) == ["q1", "a1", "q3", "a3"]
        assert "continuing from" not in screen_text(pilot)
        tree = await whole_tree(pilot)
        assert tree.siblings(entry_with(pilot, "q3").id) == (1, 2)


async def test_label_shows_on_the_message_and_in_the_tree(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        await focus(pilot, "q1")
        await pilot.press("alt+l")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TextPrompt)
        await type_text(pilot, "the start")
        await pilot.press("enter")
        await settle(pilot)
        assert "⚑ the start" in screen_text(pilot)
        assert (await session(pilot).labels()) == {entry_with(pilot, "q1").id: "the start"}
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TreeScreen)
        assert "[the start]" in screen_text(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await focus(pilot, "q1")
        await pilot.press("alt+l")
        await settle(pilot)
        await pilot.press("ctrl+u", "enter")  # empty: removes the label
        await settle(pilot)
        assert await session(pilot).labels() == {}
        assert "⚑" not in screen_text(pilot)


async def test_copy_the_message_and_its_last_code_block(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(
            pilot,
            fake_provider,
            ("code please", "Here:\n\n```py\nx = 1\n```\n\nand\n\n```sh\nls -l\n```\n"),
        )
        reply = session(pilot).path[-1]
        await pilot.app.screen.chat_view.focus_entry(reply.id)
        await settle(pilot)
        await pilot.press("alt+c")
        assert pilot.app.clipboard == reply.message.text
        await pilot.press("alt+shift+c")
        assert pilot.app.clipboard == "ls -l"
        await focus(pilot, "code please")
        await pilot.press("alt+shift+c")
        assert pilot.app.clipboard == "ls -l"
        assert any("no code block" in n for n in notifications(pilot))


async def test_fork_opens_a_new_session_that_remembers_its_parent(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        parent = session(pilot)
        a1 = entry_with(pilot, "a1")
        await focus(pilot, "a1")
        await pilot.press("alt+n")
        await settle(pilot)
        forked = session(pilot)
        assert forked.id != parent.id
        assert isinstance(pilot.app.screen, ChatScreen) and pilot.app.screen.session is forked
        assert (forked.info.parent_session_id, forked.info.parent_entry_id) == (parent.id, a1.id)
        assert texts(pilot) == ["q1", "a1"]
        assert "q2" not in screen_text(pilot) and "a1" in screen_text(pilot)
        await chat(pilot, fake_provider, ("q3", "a3"))
        assert texts(pilot) == ["q1", "a1", "q3", "a3"]
        assert len(await parent.store.entries(parent.id)) == len(
            parent.path
        )  # the parent is untouched


async def test_fork_command_keeps_first_k_and_last_n(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"), ("q3", "a3"))
        parent_id = session(pilot).id
        await type_text(pilot, "/fork 1 2")
        await pilot.press("enter")
        await settle(pilot)
        assert session(pilot).info.parent_session_id == parent_id
        assert texts(pilot) == ["q1", "q3", "a3"]


async def test_tree_jump_rebuilds_the_chat_and_persists_the_leaf(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "a1")
        await pilot.press("alt+h")
        await settle(pilot)
        await chat(pilot, fake_provider, ("q3", "a3"))
        await type_text(pilot, "/tree")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TreeScreen)
        view = pilot.app.screen.query_one(TreeView)
        target = next(i for i, r in enumerate(view.rows) if r.preview == "a2")
        view.cursor = target
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert texts(pilot) == ["q1", "a1", "q2", "a2"]
        shown = [
            w.entry.message.text
            for w in pilot.app.screen.chat_view.message_widgets
            if w.entry and w.entry.message
        ]
        assert shown[-2:] == ["q2", "a2"]
        assert await stored_path(pilot) == ["q1", "a1", "q2", "a2"]


async def test_leaving_a_branch_asks_for_a_summary_that_reaches_the_next_request(
    fake_provider, fake_args
) -> None:
    write_config("ask")
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("try the risky plan", "the plan crashed"))
        await focus(pilot, "a1")
        await pilot.press("alt+h")
        await settle(pilot)
        assert isinstance(pilot.app.screen, Confirm)
        assert "Summarize the branch you are leaving?" in screen_text(pilot)
        fake_provider.script(Reply(text="The risky plan was tried and crashed."))
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        path = session(pilot).path
        assert path[-1].type == "branch_summary"
        assert "branch summary · The risky plan was tried and crashed." in screen_text(pilot)
        await chat(pilot, fake_provider, ("try the safe plan", "ok"))
        sent = str(fake_provider.last_request.body)
        assert "explored another branch" in sent and "The risky plan was tried and crashed." in sent
        assert "the plan crashed" not in sent


async def test_no_summary_question_when_nothing_is_left_behind_or_on_no(
    fake_provider, fake_args
) -> None:
    write_config("ask")
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        requests = len(fake_provider.requests)
        await focus(pilot, "a1")
        await pilot.press("alt+h")
        await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert len(fake_provider.requests) == requests
        assert session(pilot).path[-1].message.text == "a1"
        # a1 -> the old leaf a2 again: nothing on the old path (a1) is left behind
        await pilot.press("ctrl+g")
        await settle(pilot)
        view = pilot.app.screen.query_one(TreeView)
        view.cursor = next(i for i, r in enumerate(view.rows) if r.preview == "a2")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert texts(pilot) == ["q1", "a1", "q2", "a2"]


async def test_flipping_between_alternative_replies_asks_nothing(fake_provider, fake_args) -> None:
    write_config("ask")
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        await focus(pilot, "a1")
        fake_provider.script(Reply(text="a1 again"))
        await pilot.press("alt+r")
        await settle(pilot)
        await focus(pilot, "a1 again")
        await pilot.press("left")  # leaves only a reply behind: nothing to summarize
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert texts(pilot) == ["q1", "a1"]
        await chat(pilot, fake_provider, ("q2", "a2"))
        await focus(pilot, "a1")
        await pilot.press("right")  # leaves q2 and its answer behind: a conversation
        await settle(pilot)
        assert isinstance(pilot.app.screen, Confirm)


async def test_always_summarizes_when_an_edit_leaves_a_branch(fake_provider, fake_args) -> None:
    write_config("always")
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"), ("q2", "a2"))
        await focus(pilot, "q2")
        await pilot.press("enter")
        fake_provider.script(Reply(text="Asked q2; got a2."), Reply(text="a2 bis"))
        await pilot.press("end", "space", "b", "i", "s", "enter")
        await settle(pilot)
        assert texts(pilot) == ["q1", "a1", "q2 bis", "a2 bis"]
        kinds = [e.type for e in session(pilot).path]
        assert "branch_summary" in kinds
        tree = await whole_tree(pilot)
        edited = entry_with(pilot, "q2 bis")
        assert [tree.entry(i).message.text for i in tree.alternatives(edited.id)] == [
            "q2",
            "q2 bis",
        ]
        assert "Asked q2; got a2." in str(fake_provider.last_request.body)


async def test_shift_r_regenerates_with_another_model(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1"))
        await focus(pilot, "a1")
        await pilot.press("alt+shift+r")
        await settle(pilot)
        await pilot.press("ctrl+a", "ctrl+k")
        await type_text(pilot, "openai/other")
        fake_provider.script(Reply(text="a1 from other"))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert texts(pilot) == ["q1", "a1 from other"]
        assert fake_provider.last_request.body["model"] == "other"
        tree = await whole_tree(pilot)
        again = entry_with(pilot, "a1 from other")
        assert tree.entry(again.parent_id).type == "model_change"
        assert [tree.entry(i).message.text for i in tree.alternatives(again.id)] == [
            "a1",
            "a1 from other",
        ]
        assert bar_text(pilot.app.screen.chat_view.message_widgets[-1]) == "◀ 2/2 ▶"
