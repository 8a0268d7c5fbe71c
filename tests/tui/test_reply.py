"""Replies: streamed into the chat and saved, stopped with Esc, errors and retry."""

from __future__ import annotations

import asyncio

from fake_provider import Fail, Reply, Stall

from tests.tui.helpers import (
    app_of,
    notifications,
    running,
    screen_text,
    send,
    settle,
    type_text,
    wait_for,
)
from tui.widgets.assistant_message import AssistantMessage
from tui.widgets.prompt_input import PromptInput


def assistant_messages(pilot):
    path = app_of(pilot).conversation.session.path
    return [e.message for e in path if e.message is not None and e.message.role == "assistant"]


def failing(times: int = 4) -> list[Fail]:
    """A 500 on every attempt (retry-after 0 keeps the retries instant)."""
    return [Fail(500, retry_after=0) for _ in range(times)]


async def test_reply_is_streamed_and_saved(fake_provider, fake_args) -> None:
    fake_provider.script(
        Reply(
            text="Paris is the capital of France.", usage={"input_tokens": 12, "output_tokens": 8}
        )
    )
    async with running(fake_args) as pilot:
        await send(pilot, "Capital of France?")
        [reply] = assistant_messages(pilot)
        assert reply.text == "Paris is the capital of France."
        assert reply.stop_reason == "stop"
        body = fake_provider.last_request.body
        assert body["model"] == "test"
        assert body["messages"][-1]["content"] in (
            "Capital of France?",
            [{"type": "text", "text": "Capital of France?"}],
        )
        assert "Paris is the capital of France." in screen_text(pilot)


async def test_turns_share_a_connection_the_app_closes_when_it_ends(
    fake_provider, fake_args
) -> None:
    from core.providers import http_clients

    async with running(fake_args) as pilot:
        await send(pilot, "one")
        await send(pilot, "two")
        assert len({request.client for request in fake_provider.requests}) == 1
        clients = dict(http_clients._clients[asyncio.get_running_loop()])
    assert clients and all(client.is_closed for client in clients.values())


async def test_escape_stops_the_reply_and_keeps_what_arrived(fake_provider, fake_args) -> None:
    fake_provider.script(
        Stall(
            seconds=30,
            after_chunks=3,
            reply=Reply(text="The beginning and then a long pause", chunk_size=4),
        )
    )
    async with running(fake_args) as pilot:
        await type_text(pilot, "tell me")
        await pilot.press("enter")
        screen = pilot.app.screen
        # What arrives before the pause (the role, then two pieces) is on screen:
        # waited for, not a fixed time (a loaded machine can take longer than any).
        await wait_for(lambda: "The begi" in screen_text(pilot), pilot, timeout=60)
        await pilot.press("escape")
        await settle(pilot)
        [reply] = assistant_messages(pilot)
        assert reply.stop_reason == "aborted"
        assert reply.text == "The begi"
        assert not screen.replying


async def test_escape_without_a_reply_does_nothing(fake_args) -> None:
    async with running(fake_args) as pilot:
        await type_text(pilot, "draft")
        await pilot.press("escape")
        assert pilot.app.screen.query_one(PromptInput).text == "draft"


async def test_sending_while_a_reply_streams_queues_the_message(fake_provider, fake_args) -> None:
    fake_provider.script(Stall(seconds=30, after_chunks=2))
    async with running(fake_args) as pilot:
        await type_text(pilot, "first")
        await pilot.press("enter")
        await wait_for(lambda: pilot.app.screen.replying and fake_provider.requests, pilot)
        await type_text(pilot, "second")
        await pilot.press("enter")
        await pilot.pause()
        assert pilot.app.screen.query_one(PromptInput).text == ""
        assert pilot.app.screen.compaction_status.queued == ("second",)
        await pilot.press("escape")  # stops the reply; what was queued is sent
        await settle(pilot)
        path = app_of(pilot).conversation.session.path
        assert [e.message.text for e in path if e.message and e.message.role == "user"] == [
            "first",
            "second",
        ]


async def test_error_is_saved_as_an_error_reply_and_retry_runs_it_again(
    fake_provider, fake_args
) -> None:
    fake_provider.script(*failing(), Reply(text="Recovered."))
    async with running(fake_args) as pilot:
        await send(pilot, "hello")
        [failed] = assistant_messages(pilot)
        assert failed.stop_reason == "error"
        assert "500" in (failed.error or "")
        session = app_of(pilot).conversation.session
        user_entry = next(
            e for e in session.path if e.message is not None and e.message.role == "user"
        )
        await pilot.press("ctrl+r")
        await settle(pilot)
        [reply] = assistant_messages(pilot)
        assert reply.text == "Recovered."
        assert [e.message.role for e in session.path if e.message] == ["user", "assistant"]
        siblings = await session.children(user_entry.id)
        assert len(siblings) == 2, "the failed answer stays in the tree as a sibling"
        assert sum(1 for r in fake_provider.requests if r.path.endswith("/chat/completions")) == 5


async def test_retry_with_nothing_to_retry_says_so(fake_args) -> None:
    async with running(fake_args) as pilot:
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert any("Nothing to retry" in n for n in notifications(pilot))


async def test_retry_uses_the_newly_chosen_model(fake_provider, fake_args) -> None:
    fake_provider.script(*failing(), Reply(text="From the other model."))
    async with running(fake_args) as pilot:
        await send(pilot, "hello")
        await send(pilot, "/model openai/other")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert fake_provider.last_request.body["model"] == "other"
        assert assistant_messages(pilot)[-1].model == "openai/other"


async def test_storage_failure_keeps_the_draft(fake_args) -> None:
    async with running(fake_args) as pilot:
        await app_of(pilot).conversation.session.store.close()
        await type_text(pilot, "precious words")
        await pilot.press("enter")
        await settle(pilot)
        assert pilot.app.screen.query_one(PromptInput).text == "precious words"
        assert any("Could not save the message, draft kept" in n for n in notifications(pilot))


async def test_reply_with_markup_and_escape_sequences_is_shown_literally(
    fake_provider, fake_args
) -> None:
    fake_provider.script(
        Reply(text="[bold]not bold[/bold] [/INST] \x1b]52;c;aGk=\x07 \x1b[2J done")
    )
    async with running(fake_args) as pilot:
        await send(pilot, "hi")
        text = screen_text(pilot)
        assert "[bold]not bold[/bold] [/INST]" in text
        assert "52;c" not in text


async def test_r_on_the_focused_failed_reply_retries_it(fake_provider, fake_args) -> None:
    fake_provider.script(*failing(), Reply(text="Second try."))
    async with running(fake_args) as pilot:
        await send(pilot, "hello")
        await pilot.press("ctrl+up")
        assert isinstance(pilot.app.focused, AssistantMessage)
        await pilot.press("alt+r")
        await settle(pilot)
        assert [m.text for m in assistant_messages(pilot)] == ["Second try."]
        assert isinstance(pilot.app.focused, PromptInput)


async def test_r_on_a_good_reply_regenerates_it(fake_provider, fake_args) -> None:
    fake_provider.script(Reply(text="Fine."), Reply(text="Finer."))
    async with running(fake_args) as pilot:
        await send(pilot, "hello")
        await pilot.press("ctrl+up", "alt+r")
        await settle(pilot)
        assert len(fake_provider.requests) == 2
        assert [m.text for m in assistant_messages(pilot)] == ["Finer."]


async def test_the_chat_views_retry_request_retries_that_reply(fake_provider, fake_args) -> None:
    fake_provider.script(*failing(), Reply(text="Clicked."))
    async with running(fake_args) as pilot:
        await send(pilot, "hello")
        failed = app_of(pilot).conversation.session.path[-1]
        pilot.app.screen.chat_view.post_message(AssistantMessage.RetryRequested(failed.id))
        await settle(pilot)
        assert [m.text for m in assistant_messages(pilot)] == ["Clicked."]


async def test_escape_on_a_message_goes_back_to_the_input(fake_args) -> None:
    async with running(fake_args) as pilot:
        await send(pilot, "hello")
        await pilot.press("ctrl+up")
        assert not isinstance(pilot.app.focused, PromptInput)
        await pilot.press("escape")
        assert isinstance(pilot.app.focused, PromptInput)
