"""The newcomer's steps from issue #14 in the app: a local server's small
window, learned and shown; compaction before anything is dropped; /compact on
a short chat; a server that refuses by ending its stream. Real SQLite, the
fake provider imitating each local server over HTTP (tests/fake_local_server.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from fake_local_server import LocalServer

from core.providers import registry
from core.sessions.entries import Compaction
from tests.fake_provider import FakeProvider
from tests.tui.helpers import app_of, notifications, running, screen_text, send, settle, wait_for
from tui.widgets.assistant_message import AssistantMessage
from tui.widgets.footer import StatusFooter

WORDS = "the garden by the sea has cats and a long wall of old stones "


def configure(text: str) -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(text)


def footer(pilot):
    return pilot.app.screen.query_one(StatusFooter).state


def compactions(pilot) -> list[Compaction]:
    path = app_of(pilot).conversation.session.path
    return [e.payload for e in path if isinstance(e.payload, Compaction)]


async def send_pasted(pilot, text: str) -> None:
    """Send ``text`` as if pasted: one edit, then Enter."""
    pilot.app.screen.prompt.insert(text)
    await pilot.press("enter")
    await settle(pilot)


@pytest.fixture
def no_demo_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry._DEMO, "delay", 0)


async def test_the_footer_shows_the_window_the_server_reports() -> None:
    """From issue #14: ``ctx 21/128k`` for a server with a 4,096-token context."""
    with FakeProvider(local=LocalServer("llama.cpp", 4_096)) as server:
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await wait_for(lambda: footer(pilot).window == 4_096, pilot)
            assert not footer(pilot).window_guessed
            await send(pilot, "hello")
            text = screen_text(pilot)
            assert "/4.1k (" in text and "4.1k?" not in text and "128k" not in text


async def test_sixteen_short_messages_on_a_3000_token_window_compact(no_demo_pace) -> None:
    """From issue #14: "8 oldest message(s) were left out" and no compaction."""
    configure('context_windows = { "demo" = 3000 }\n')
    async with running(["--model", "demo"]) as pilot:
        for i in range(16):
            await send_pasted(pilot, f"message {i}: tell me more about the cat and the sea")
        assert compactions(pilot)
        assert not [n for n in notifications(pilot) if "left out" in n]


async def test_compact_on_a_short_chat_writes_nothing(no_demo_pace) -> None:
    """From issue #14: ``/compact`` on a short chat made the context larger (426 -> 706)."""
    async with running(["--model", "demo"]) as pilot:
        await send(pilot, "hi there")
        before = list(app_of(pilot).conversation.session.path)
        await send(pilot, "/compact")
        assert notifications(pilot)[-1].lower().startswith("nothing to compact yet")
        assert app_of(pilot).conversation.session.path == before


async def test_a_stream_that_just_ends_is_an_overflow_not_a_lost_connection() -> None:
    """From issue #14: llama-cpp-python's server ends the stream on a prompt too
    long; Tangents said "the stream ended without a stop reason; retrying in 1 s"."""
    local = LocalServer("llama-cpp-python", 2_500)
    configure('context_windows = { "openai/smollm2" = 5000 }\n')  # a wrong guess, too large
    with FakeProvider(local=local) as server:
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            for i in range(8):
                await send_pasted(pilot, f"question {i}: " + WORDS * 13)
            assert local.refused == 1
            triggers = [c.details.get("trigger") for c in compactions(pilot)]
            # then the window is known to be smaller: later turns compact first
            assert triggers[0] == "overflow" and set(triggers[1:]) <= {"auto"}, triggers
            assert not [n for n in notifications(pilot) if "retrying" in n or "ended" in n]
            last = app_of(pilot).conversation.session.path[-1].message
            assert last is not None and last.role == "assistant" and last.error is None


async def test_a_server_that_counts_nothing_gets_an_estimate_marked_so() -> None:
    """Issue 32: llama-cpp-python sends no usage; the footer said ``ctx 0``.
    Its context is counted here instead, and marked ``~`` as an estimate."""
    with FakeProvider(local=LocalServer("llama-cpp-python", 4_096)) as server:
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await send(pilot, "hello " + WORDS * 4)
            assert footer(pilot).context_estimated and footer(pilot).context_tokens > 60
            assert "ctx ~" in screen_text(pilot)
    with FakeProvider(local=LocalServer("llama.cpp", 4_096)) as server:  # it counts
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await send(pilot, "hello " + WORDS * 4)
            assert not footer(pilot).context_estimated and "ctx ~" not in screen_text(pilot)


async def test_the_token_figure_of_a_server_that_counts_nothing_is_marked() -> None:
    """Issue 32: the footer said ``0 tok`` for a whole llama-cpp-python
    conversation. Its tokens are counted here, and the figure marked ``~``."""
    with FakeProvider(local=LocalServer("llama-cpp-python", 4_096)) as server:
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await send(pilot, "hello " + WORDS * 4)
            assert footer(pilot).tokens_estimated and footer(pilot).tokens > 60
            assert re.search(r"│ ~\d+ tok", screen_text(pilot)), screen_text(pilot)
            reply = pilot.app.screen.query(AssistantMessage).last()
            assert re.search(r"~\d+ tokens", reply.header_text), reply.header_text
    with FakeProvider(local=LocalServer("llama.cpp", 4_096)) as server:  # it counts
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await send(pilot, "hello " + WORDS * 4)
            assert not footer(pilot).tokens_estimated
            assert re.search(r"│ \d+ tok", screen_text(pilot)), screen_text(pilot)
            reply = pilot.app.screen.query(AssistantMessage).last()
            assert "~" not in reply.header_text and "tokens" in reply.header_text
