"""A session that is not active (issue 35) shows a line above the input that
stays, not a toast: its status and how to reactivate it. What is typed stays
in the input; ``/status active`` takes the line away."""

from __future__ import annotations

from fake_provider import Reply
from textual.widgets import Static

from tests.tui.helpers import notifications, running, screen_text, send
from tui.chat.chat_screen import ChatScreen

ARGV_OF = lambda url: ["--model", "openai/gpt-4o", "--api-base", f"{url}/v1"]  # noqa: E731


def chat_screen(pilot) -> ChatScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    return screen


def bar(pilot) -> str | None:
    """The read-only line's text, None when it is hidden."""
    line = chat_screen(pilot).query_one("#read-only", Static)
    return str(line.render()) if line.display else None


async def test_the_read_only_line_stays_while_the_session_is_paused(
    fake_provider, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    fake_provider.script(Reply(text="one"), Reply(text="two"))
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await send(pilot, "first")
        assert bar(pilot) is None
        await send(pilot, "/status paused")
        pilot.app.clear_notifications()
        await send(pilot, "kept, not sent")

        line = bar(pilot)
        assert line is not None and "paused" in line and "/status active" in line
        assert "/status active" in screen_text(pilot)
        assert chat_screen(pilot).prompt.text == "kept, not sent"
        assert len(fake_provider.requests) == 1
        [said] = notifications(pilot)  # in the app's words: no command line, no session id
        assert "paused and takes no new messages" in said and "/status active" in said
        assert "tangents sessions" not in said and chat_screen(pilot).session.id not in said

        chat_screen(pilot).prompt.text = ""
        await send(pilot, "/status active")
        assert bar(pilot) is None


async def test_a_completed_session_opens_with_the_read_only_line(
    fake_provider, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    fake_provider.script(Reply(text="one"))
    argv = ARGV_OF(fake_provider.base_url)
    async with running(argv) as pilot:
        await send(pilot, "first")
        await send(pilot, "/status completed")
        session_id = chat_screen(pilot).session.id
    async with running([*argv, "--session", session_id]) as pilot:
        line = bar(pilot)
        assert line is not None and "completed" in line and "/status active" in line


async def test_a_note_in_a_paused_session_is_refused_in_the_apps_words(
    fake_provider, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await send(pilot, "/status paused")
        pilot.app.clear_notifications()
        await send(pilot, "/note Be brief")

        [said] = notifications(pilot)
        assert "paused and takes no new messages" in said and "tangents sessions" not in said
        assert chat_screen(pilot).prompt.text == "/note Be brief"
