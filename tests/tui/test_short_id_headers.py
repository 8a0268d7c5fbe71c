"""Short ids in message headers (issue 33 item 9): each saved reply's header
ends with its short id, dim, and that id, typed as shown, is taken by
``--from``; a reply still streaming shows none yet."""

from __future__ import annotations

import re

from fake_provider import Reply, Stall

from core.sessions.ids import short_id
from tests.tui.helpers import app_of, running, screen_text, send, settle, type_text, wait_for
from tui.widgets.assistant_message import AssistantMessage
from tui.widgets.reply_view import ReplyView


async def test_each_reply_header_ends_with_its_short_id_which_from_takes() -> None:
    async with running(["--model", "demo"]) as pilot:
        await send(pilot, "first")
        await send(pilot, "second")
        replies = list(pilot.app.screen.query(AssistantMessage))
        assert len(replies) == 2
        for reply in replies:
            assert reply.entry_id is not None
            assert reply.header_text.endswith(f" · {short_id(reply.entry_id)}"), reply.header_text
            shown = reply._header_shown
            tail = shown.plain.rindex(short_id(reply.entry_id))
            assert any(s.start <= tail and "dim" in str(s.style) for s in shown.spans)
        first = replies[0]
        typed = first.header_text.rsplit(" · ", 1)[1]
        session_id = app_of(pilot).conversation.session.id
    async with running(["--model", "demo", "--session", session_id, "--from", typed]) as pilot:
        assert app_of(pilot).conversation.session.leaf_id == first.entry_id


async def test_a_streaming_reply_shows_its_short_id_once_saved(fake_provider, fake_args) -> None:
    fake_provider.script(Stall(seconds=30, after_chunks=2, reply=Reply(text="slow words here")))
    async with running(fake_args) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_for(lambda: bool(pilot.app.screen.query(ReplyView)), pilot)
        [live] = pilot.app.screen.query(ReplyView)
        await wait_for(lambda: "slow" in screen_text(pilot), pilot, timeout=30)
        assert live.entry_id is None
        assert re.search(r" · [0-9a-f]{8}$", live.header_text) is None, live.header_text
        await pilot.press("escape")
        await settle(pilot)
        [reply] = pilot.app.screen.query(AssistantMessage)
        assert reply.entry_id is not None
        assert reply.header_text.endswith(short_id(reply.entry_id))
