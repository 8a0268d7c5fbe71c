"""Editing the pinned note from its row (issue 35): the edit key on the note's
marker row puts the note in the input; sending saves a new note entry as
``/note`` does (new text, new depth, or ``off``); Esc gives the draft back."""

from __future__ import annotations

from fake_provider import Reply

from core.sessions.entries import Note
from tests.tui.helpers import notifications, running, screen_text, send, settle, type_text
from tui import keymap
from tui.chat.chat_screen import ChatScreen
from tui.widgets.markers import PinnedNoteLine

ARGV_OF = lambda url: ["--model", "openai/gpt-4o", "--api-base", f"{url}/v1"]  # noqa: E731


def chat_screen(pilot) -> ChatScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    return screen


def notes(pilot) -> list[Note]:
    return [e.payload for e in chat_screen(pilot).session.path if isinstance(e.payload, Note)]


async def edit_note_row(pilot) -> None:
    """Focus the last row (the note just pinned) and press the edit key."""
    await pilot.press("ctrl+up")
    await settle(pilot)
    assert isinstance(pilot.app.focused, PinnedNoteLine)
    assert "enter edit note" in screen_text(pilot)
    await pilot.press("enter")
    await settle(pilot)


async def started(pilot, fake_provider) -> None:
    fake_provider.script(Reply(text="one"))
    await send(pilot, "first")
    await send(pilot, "/note Be [b]brief[/b] depth 2")
    await type_text(pilot, "half typed")


async def test_the_note_row_edits_text_and_depth_and_keeps_the_draft(
    fake_provider, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await started(pilot, fake_provider)
        await edit_note_row(pilot)
        screen = chat_screen(pilot)
        assert screen.prompt.text == "Be [b]brief[/b] depth 2"
        assert "editing the note" in screen_text(pilot)

        screen.prompt.text = ""
        await send(pilot, "Be very brief depth 0")

        assert notes(pilot) == [Note("Be [b]brief[/b]", 2), Note("Be very brief", 0)]
        assert screen.prompt.text == "half typed"
        assert "note pinned 0 messages from the end: Be very brief" in screen_text(pilot)
        assert "editing the note" not in screen_text(pilot)


async def test_off_from_the_note_row_removes_the_note(fake_provider, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await started(pilot, fake_provider)
        await edit_note_row(pilot)
        chat_screen(pilot).prompt.text = ""
        await send(pilot, "off")

        assert [note.active for note in notes(pilot)] == [True, False]
        assert "note removed" in screen_text(pilot)
        assert chat_screen(pilot).prompt.text == "half typed"


async def test_esc_leaves_the_note_as_it_was_and_the_draft_back(fake_provider, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await started(pilot, fake_provider)
        await edit_note_row(pilot)
        assert chat_screen(pilot).prompt.text == "Be [b]brief[/b] depth 2"
        await pilot.press("escape")
        await settle(pilot)

        assert notes(pilot) == [Note("Be [b]brief[/b]", 2)]
        assert chat_screen(pilot).prompt.text == "half typed"
        assert len(fake_provider.requests) == 1


async def test_a_depth_of_one_reads_one_message(fake_provider, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await send(pilot, "/note Be brief depth 1")
        assert "note pinned 1 message from the end: Be brief" in screen_text(pilot)
        assert "Note pinned 1 message from the end." in notifications(pilot)


async def test_a_changed_message_edit_is_not_replaced_by_the_note(
    fake_provider, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await started(pilot, fake_provider)
        await pilot.press("ctrl+up", "up", "up", "enter")  # edit "first"
        await settle(pilot)
        assert chat_screen(pilot).prompt.text == "first"
        await type_text(pilot, " again")
        await edit_note_row(pilot)

        assert chat_screen(pilot).prompt.text == "first again"
        assert "editing message 1" in screen_text(pilot)


def test_help_says_the_edit_key_edits_a_note_too() -> None:
    [edit] = [a for a in keymap.ACTIONS if a.id == "edit_message"]
    assert "note" in edit.description
