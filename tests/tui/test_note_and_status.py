"""``/note`` and ``/status`` in the app (issue 35): the note is pinned on the
branch, shown as a marker row and sent at its depth; a session that is not
active keeps what is typed and says how to go on."""

from __future__ import annotations

from fake_provider import Reply

from tests.tui.helpers import notifications, running, screen_text, send, settle
from tui.chat.chat_screen import ChatScreen

ARGV_OF = lambda url: ["--model", "openai/gpt-4o", "--api-base", f"{url}/v1"]  # noqa: E731


def texts(message: dict) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content]


async def test_a_note_is_pinned_shown_and_sent_at_its_depth(fake_provider, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    fake_provider.script(Reply(text="one"), Reply(text="two"))
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await send(pilot, "first")
        await send(pilot, "/note Answer [b]in[/b] French depth 2")
        assert "note pinned 2 messages from the end: Answer [b]in[/b] French" in screen_text(pilot)
        await send(pilot, "second")
        wire = [m for m in fake_provider.last_request.body["messages"] if m["role"] != "system"]
        lines = "\n".join(texts(wire[0])).split("\n")
        assert lines == ["first", "[Note: Answer [b]in[/b] French]"]
        assert len(wire) == 3
        session = pilot.app.screen.session
        assert isinstance(pilot.app.screen, ChatScreen)
        assert [e.type for e in session.path].count("note") == 1
        await send(pilot, "/note off")
        assert "note removed" in screen_text(pilot)


async def test_a_completed_session_is_read_only_until_active(fake_provider, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    fake_provider.script(Reply(text="one"), Reply(text="again"))
    async with running(ARGV_OF(fake_provider.base_url)) as pilot:
        await send(pilot, "first")
        await send(pilot, "/status completed")
        asked = len(fake_provider.requests)
        await send(pilot, "kept, not sent")
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        assert screen.prompt.text == "kept, not sent"
        assert any("is completed and takes no new messages" in n for n in notifications(pilot))
        assert len(fake_provider.requests) == asked and len(screen.session.messages()) == 2
        screen.prompt.text = ""
        await send(pilot, "/status active")
        await send(pilot, "more")
        await settle(pilot)
        assert len(screen.session.messages()) == 4
