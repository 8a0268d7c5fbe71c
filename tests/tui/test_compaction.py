"""Compaction in the chat: /compact, automatic compaction, messages queued
meanwhile, Esc, and the marker. Real SQLite, the fake provider over HTTP."""

from __future__ import annotations

import os
from pathlib import Path

from fake_provider import Fail, Reply, Stall

from core.sessions.context import SUMMARY_PREFIX
from core.sessions.entries import Compaction
from tests.context_texts import split_summaries
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
from tui.widgets.compaction_status import CompactionStatus
from tui.widgets.footer import StatusFooter
from tui.widgets.markers import CompactionMarker

LONG = " ".join(f"word{i}" for i in range(400))  # ~2,400 characters, ~600 estimated tokens


def configure(text: str) -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(text)


def user_texts(body: dict) -> list[str]:
    """The texts of a recorded OpenAI-style request, system prompt left out
    (a summary apart from what it is sent with)."""
    out = []
    for message in body["messages"]:
        if message["role"] == "system":
            continue
        content = message["content"]
        out.extend(
            [content]
            if isinstance(content, str)
            else [b["text"] for b in content if b["type"] == "text"]
        )
    return [piece for text in out for piece in split_summaries(text)]


def status(pilot) -> CompactionStatus:
    return pilot.app.screen.query_one(CompactionStatus)


def footer(pilot):
    return pilot.app.screen.query_one(StatusFooter)


async def three_turns(pilot, fake_provider) -> None:
    fake_provider.script(
        *[
            Reply(text=f"answer {n}", usage={"input_tokens": 4000, "output_tokens": 100})
            for n in ("one", "two", "three")
        ]
    )
    # The first two are long enough that a summary makes the context smaller
    # (a manual compaction that would not is refused).
    detail = " about the parser" * 12
    for text in ("first question" + detail, "second question" + detail, "third question"):
        await send(pilot, text)


async def test_compact_sends_the_summary_and_kept_tail_next(fake_provider, fake_args) -> None:
    configure('[compaction]\ncompaction_model = "openai/cheap-summarizer"\n')
    async with running(fake_args) as pilot:
        await three_turns(pilot, fake_provider)
        before = footer(pilot).state.context_tokens
        fake_provider.script(Reply(text="## Goal\nThe SUMMARY of questions one and two"))
        await send(pilot, "/compact")
        summary_request = fake_provider.requests[-1].body
        assert summary_request["model"] == "cheap-summarizer", "compaction_model is used"
        assert "[User]: first question" in user_texts(summary_request)[0]
        # The marker is shown, the history above it stays (dimmed), the context figure drops.
        view = pilot.app.screen.chat_view
        assert len(view.query(CompactionMarker)) == 1
        assert "compacted 4,1" in screen_text(pilot) and "first question" in screen_text(pilot)
        assert view.query(".-compacted")
        assert footer(pilot).state.context_tokens < before / 10
        assert not status(pilot).display

        await send(pilot, "fourth question")
        sent = user_texts(fake_provider.requests[-1].body)
        assert sent[0] == SUMMARY_PREFIX + "## Goal\nThe SUMMARY of questions one and two"
        assert sent[1:] == ["third question", "answer three", "fourth question"]


async def test_compact_with_focus_puts_it_in_the_summary_prompt(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await three_turns(pilot, fake_provider)
        fake_provider.script(Reply(text="summary"))
        await send(pilot, "/compact keep the database decisions")
        prompt = user_texts(fake_provider.requests[-1].body)[0]
        assert prompt.endswith(
            "Additional focus for this summary, from the user: keep the database decisions"
        )


async def test_nothing_to_compact_says_so_and_changes_nothing(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await send(pilot, "/compact")
        assert notifications(pilot)[-1].startswith("Nothing to compact")
        assert fake_provider.requests == [] and app_of(pilot).conversation.session.path == []


async def test_a_failed_summary_request_loses_nothing(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await three_turns(pilot, fake_provider)
        path = list(app_of(pilot).conversation.session.path)
        fake_provider.script(*[Fail(500, retry_after=0) for _ in range(4)])
        await send(pilot, "/compact")
        assert notifications(pilot)[-1].startswith("Compaction failed, nothing was changed:")
        assert app_of(pilot).conversation.session.path == path
        assert not pilot.app.screen.query(CompactionMarker)


async def test_messages_typed_while_compacting_are_queued_and_sent_after(
    fake_provider, fake_args
) -> None:
    async with running(fake_args) as pilot:
        await three_turns(pilot, fake_provider)
        fake_provider.script(Stall(5, reply=Reply(text="SLOW SUMMARY")), Reply(text="after"))
        await type_text(pilot, "/compact")
        await pilot.press("enter")
        await wait_for(lambda: bool(status(pilot).progress), pilot)
        assert "Compacting… Esc to cancel" in screen_text(pilot)
        for text in ("queued one", "queued two"):
            await type_text(pilot, text)
            await pilot.press("enter")
        await pilot.pause()
        assert status(pilot).queued == ("queued one", "queued two")
        assert "queued queued one" in screen_text(pilot)
        requests = len(fake_provider.requests)
        await settle(pilot)
        # The summary request was the last one before; the queued messages went after it, in order.
        assert len(fake_provider.requests) == requests + 1
        sent = user_texts(fake_provider.requests[-1].body)
        assert sent[0] == SUMMARY_PREFIX + "SLOW SUMMARY"
        assert sent[-1] == "queued one\n\nqueued two"
        assert not status(pilot).display


async def test_escape_stops_the_compaction_and_keeps_the_queue(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await three_turns(pilot, fake_provider)
        path = list(app_of(pilot).conversation.session.path)
        fake_provider.script(Stall(30, reply=Reply(text="never")), Reply(text="after"))
        await type_text(pilot, "/compact")
        await pilot.press("enter")
        await wait_for(lambda: bool(status(pilot).progress), pilot)
        await type_text(pilot, "still wanted")
        await pilot.press("enter", "escape")
        await settle(pilot)
        assert "Compaction stopped: nothing was changed." in notifications(pilot)
        session = app_of(pilot).conversation.session
        assert not any(isinstance(e.payload, Compaction) for e in session.path)
        assert session.path[: len(path)] == path
        assert user_texts(fake_provider.requests[-1].body)[-1] == "still wanted"


SMALL_WINDOW = '[context_windows]\n"openai/test" = 2000\n'  # compact above 1,000 tokens


async def near_the_window(pilot, fake_provider) -> None:
    """Two long turns: 1,410 of the 2,000-token window used, so the next message compacts first."""
    fake_provider.script(
        Reply(text="a1 " + LONG, chunk_size=500, usage={"input_tokens": 100, "output_tokens": 600}),
        Reply(text="a2 " + LONG, chunk_size=500, usage={"input_tokens": 810, "output_tokens": 600}),
    )
    await send(pilot, "one")
    await send(pilot, "two")


async def test_automatic_compaction_shows_progress_then_the_marker(
    fake_provider, fake_args
) -> None:
    configure(SMALL_WINDOW)
    async with running(fake_args) as pilot:
        await near_the_window(pilot, fake_provider)
        assert "-context-warning" in footer(pilot).classes, "1,410 of 2,000"
        fake_provider.script(
            Stall(3.0, reply=Reply(text="AUTO SUMMARY")),
            Reply(text="the answer", usage={"input_tokens": 300, "output_tokens": 5}),
            Reply(
                text="later", usage={"input_tokens": 320, "output_tokens": 5}
            ),  # requests carry tool schemas too
        )
        await type_text(pilot, "three")
        await pilot.press("enter")
        await wait_for(lambda: bool(status(pilot).progress), pilot)
        assert "Compacting (the context is near the model's limit)… Esc to cancel" in screen_text(
            pilot
        )
        await type_text(pilot, "meanwhile")
        await pilot.press("enter")
        await pilot.pause()
        assert status(pilot).queued == ("meanwhile",)
        await settle(pilot)
        [marker] = pilot.app.screen.chat_view.query(CompactionMarker)
        assert marker.entry.payload.details["trigger"] == "auto"
        *_, answered, queued = fake_provider.requests
        sent = user_texts(answered.body)
        assert sent[0] == SUMMARY_PREFIX + "AUTO SUMMARY" and sent[-1] == "three"
        assert "one" not in sent
        assert user_texts(queued.body)[-2:] == ["the answer", "meanwhile"], "sent after the reply"
        assert not status(pilot).display
        assert footer(pilot).classes.isdisjoint({"-context-warning", "-context-error"})


async def test_a_failed_automatic_compaction_is_said_and_the_reply_still_comes(
    fake_provider, fake_args
) -> None:
    configure("retries = 0\n" + SMALL_WINDOW)
    async with running(fake_args) as pilot:
        await near_the_window(pilot, fake_provider)
        fake_provider.script(
            Fail(500), Stall(2.0, after_chunks=2, reply=Reply(text="answered anyway"))
        )
        await type_text(pilot, "three")
        await pilot.press("enter")
        await wait_for(
            lambda: len(fake_provider.requests) == 4, pilot
        )  # two turns, the summary, the reply
        await pilot.pause(0.3)  # the reply stalls for 2 s after its first chunks
        assert pilot.app.screen.replying
        assert not status(pilot).progress, (
            "the progress line ends when the reply starts, not after it"
        )
        await settle(pilot)
        assert "answered anyway" in screen_text(pilot)
        assert any(n.startswith("automatic compaction failed") for n in notifications(pilot))
        assert not pilot.app.screen.chat_view.query(CompactionMarker)


async def test_the_marker_expands_to_the_summary(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await three_turns(pilot, fake_provider)
        fake_provider.script(Reply(text="## Goal\n\nShip the **compaction** marker"))
        await send(pilot, "/compact")
        marker = pilot.app.screen.chat_view.query_one(CompactionMarker)
        assert "Ship the" not in screen_text(pilot)
        await pilot.click(marker)
        await settle(pilot)
        assert marker.expanded and "Ship the compaction marker" in screen_text(pilot)
        marker.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert not marker.expanded and "Ship the" not in screen_text(pilot)


async def test_a_marker_expanded_at_the_bottom_brings_its_summary_into_view(
    fake_provider, fake_args
) -> None:
    """Issue 33 item 10: the summary opened below the screen's edge, unseen."""
    async with running(fake_args, size=(80, 24)) as pilot:
        await three_turns(pilot, fake_provider)
        points = "\n".join(f"- p{i}" for i in range(20))
        fake_provider.script(Reply(text=f"## Goal\n\nShip the marker\n\n{points}"))
        await send(pilot, "/compact")
        view = pilot.app.screen.chat_view
        await settle(pilot)
        await wait_for(lambda: bool(view.query(CompactionMarker)), pilot)
        marker = view.query_one(CompactionMarker)
        marker.focus()
        await pilot.press("enter")
        await settle(pilot)
        await wait_for(lambda: "p5" in screen_text(pilot), pilot)
        assert "Ship the marker" in screen_text(pilot)
