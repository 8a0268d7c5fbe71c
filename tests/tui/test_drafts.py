"""What is typed and not sent is kept per session (issue #33): through a
resume, a new session (ctrl+n) and a session not saved yet."""

from __future__ import annotations

from core.sessions.session import Session
from tests.tui.helpers import app_of, notifications, running, send, settle, type_text, wait_for
from tui.widgets.prompt_input import PromptInput


def prompt_text(pilot) -> str:
    return pilot.app.screen.query_one(PromptInput).text


async def saved_draft(pilot, key: str) -> str:
    return await app_of(pilot).conversation.session.store.draft(key)


async def wait_saved(pilot, key: str, text: str) -> None:
    store = app_of(pilot).conversation.session.store
    seen: list[str] = []

    async def check() -> None:
        seen.append(await store.draft(key))

    for _ in range(100):
        await check()
        if seen[-1] == text:
            return
        await pilot.pause(0.05)
    raise AssertionError(f"draft {key!r} is {seen[-1]!r}, not {text!r}")


async def test_a_draft_comes_back_when_the_session_is_resumed() -> None:
    async with running(["--model", "demo"]) as pilot:
        await send(pilot, "first question")
        session_id = app_of(pilot).conversation.session.id
        await type_text(pilot, "half a thought")
        await wait_saved(pilot, session_id, "half a thought")
    async with running(["--model", "demo", "-c"]) as pilot:
        await wait_for(lambda: prompt_text(pilot) == "half a thought", pilot)
        assert any("draft is back" in n for n in notifications(pilot))
        await pilot.press("enter")
        await settle(pilot)
        await wait_saved(pilot, session_id, "")


async def test_a_new_session_keeps_the_old_sessions_draft_and_says_so() -> None:
    async with running(["--model", "demo"]) as pilot:
        await send(pilot, "first question")
        first = app_of(pilot).conversation.session.id
        await type_text(pilot, "left behind")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert app_of(pilot).conversation.session.id != first
        assert prompt_text(pilot) == ""
        assert any("stays with the previous session" in n for n in notifications(pilot))
        assert await saved_draft(pilot, first) == "left behind"
        store = app_of(pilot).conversation.session.store
        reopened = await Session.open(store, first)
        app_of(pilot).open_session(reopened)
        await settle(pilot)
        await wait_for(lambda: prompt_text(pilot) == "left behind", pilot)


async def test_a_session_not_saved_yet_keeps_its_draft_for_the_next_new_one() -> None:
    async with running(["--model", "demo"]) as pilot:
        await type_text(pilot, "fresh idea")
        await wait_saved(pilot, "", "fresh idea")
    async with running(["--model", "demo"]) as pilot:
        await wait_for(lambda: prompt_text(pilot) == "fresh idea", pilot)
        await pilot.press("enter")
        await settle(pilot)
        session_id = app_of(pilot).conversation.session.id
        await type_text(pilot, "x")
        await wait_saved(pilot, session_id, "x")
        assert await saved_draft(pilot, "") == "", "sent: the new session's draft is gone"
