"""While a server sends nothing, the reply says how long it has waited
(issue 37), and a limit that runs out ends the reply with its reason. The
real app against the fake provider over HTTP, limits set in the config."""

from __future__ import annotations

import os
from pathlib import Path

from fake_provider import Reply, Stall

from tests.fake_provider import FakeProvider
from tests.tui.helpers import running, screen_text, settle, type_text, wait_for


def configure(text: str) -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(text)


def argv(server: FakeProvider) -> list[str]:
    return ["--model", "openai/slow", "--api-base", f"{server.base_url}/v1"]


async def test_the_wait_for_the_first_token_is_counted_in_seconds() -> None:
    with FakeProvider() as server:
        server.script(Stall(2.5, reply=Reply(text="late but here")))
        async with running(argv(server)) as pilot:
            await type_text(pilot, "hello")
            await pilot.press("enter")
            await wait_for(lambda: "waiting for the first token · 1 s" in screen_text(pilot), pilot)
            await wait_for(lambda: "waiting for the first token · 2 s" in screen_text(pilot), pilot)
            await settle(pilot)
            text = screen_text(pilot)
            assert "late but here" in text and "waiting for the first token" not in text


async def test_silence_after_the_first_words_ends_the_reply_at_the_idle_limit() -> None:
    configure("idle_timeout = 2\n")
    with FakeProvider() as server:
        server.script(Stall(3600, after_chunks=6))
        async with running(argv(server)) as pilot:
            await type_text(pilot, "hello")
            await pilot.press("enter")
            await wait_for(lambda: "no data from the server · 1 s" in screen_text(pilot), pilot)
            await settle(pilot)
            text = screen_text(pilot)
            assert "echo: hello" in text
            assert "the server sent nothing for 2 s (idle_timeout)" in text
            assert "no data from the server" not in text
