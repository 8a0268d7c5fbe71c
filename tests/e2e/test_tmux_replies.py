"""Replies in the real program (tmux): nothing waits for the provider SDK, and a
long reply is painted as it arrives while keys still echo (issue #13)."""

from __future__ import annotations

import re
import time

import pytest
from fake_provider import Reply

from tests.bench.reply_driver import LAST_WORD, long_reply_text
from tests.e2e.conftest import tangents_program

pytestmark = pytest.mark.slow

READY = "Message (enter sends"
SDK_DELAY = 6.0
"""Seconds the app's background SDK import is held back in the first test."""


def input_line_holds(screen: str, text: str) -> bool:
    """Is ``text`` alone on a line (the input line, the message above it sent)?"""
    return re.search(rf"(?m)^\s*{re.escape(text)}\s*$", screen) is not None


def start(tmux, fake_provider, env) -> None:
    base = f"{fake_provider.base_url}/v1"
    tmux.start([tangents_program(), "--model", "openai/fake", "--api-base", base], env)
    tmux.wait_for(READY)


def poll(tmux, done, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        screen = tmux.screen()
        if done(screen):
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; the pane shows:\n{screen}")
        time.sleep(0.01)


def test_the_first_message_shows_and_keys_echo_before_the_sdk_has_loaded(
    tmux, fake_provider, app_env
) -> None:
    """The SDK import (in a background thread) is held back SDK_DELAY seconds:
    the message and a key typed right after Enter are on screen while the
    request has not even reached the server."""
    start(tmux, fake_provider, {**app_env, "TANGENTS_SDK_IMPORT_DELAY": str(SDK_DELAY)})
    tmux.type("first question")
    tmux.wait_for("first question")
    tmux.keys("Enter")
    tmux.type("z")
    screen = poll(
        tmux,
        lambda s: "first question" in s and input_line_holds(s, "z"),
        timeout=SDK_DELAY,
    )
    assert fake_provider.requests == [], "the request went out before the SDK could have loaded"
    assert "echo:" not in screen
    tmux.wait_for("echo: first question", timeout=60)
    assert len(fake_provider.requests) == 1


def test_a_long_reply_paints_as_it_arrives_and_keys_echo_meanwhile(
    tmux, fake_provider, app_env
) -> None:
    """20,000 words at the fake server's full speed (no delay between chunks):
    the pane shows the reply's words before its last word (painted as it
    arrives, not once at the end), and keys typed from Enter on, one every
    50 ms, are echoed on a screen that shows the reply begun but not ended (the
    program answers keys while it streams). Ordering only: how fast is for
    tests/bench/bench_replies.py."""
    start(tmux, fake_provider, app_env)
    fake_provider.script(Reply(text=long_reply_text(20_000), chunk_size=30, delay=0))
    tmux.type("write a lot")
    tmux.wait_for("write a lot")
    tmux.keys("Enter")
    partial = echoed_while_streaming = False
    typed, next_key = 0, time.monotonic()
    deadline = next_key + 120
    while True:
        if time.monotonic() >= next_key:
            tmux.type("z")
            typed, next_key = typed + 1, time.monotonic() + 0.05
        screen = tmux.screen()
        if LAST_WORD in screen:
            break
        if "alpha beta" in screen:
            partial = True
            echoed_while_streaming |= re.search(r"(?m)^\s*z+\s*$", screen) is not None
        assert time.monotonic() < deadline, f"timed out; the pane shows:\n{screen}"
        time.sleep(0.005)
    assert partial, "the reply was not painted as it arrived"
    assert echoed_while_streaming, "no key was echoed while the reply streamed"
    poll(tmux, lambda s: input_line_holds(s, "z" * typed), timeout=60)  # every key arrived
