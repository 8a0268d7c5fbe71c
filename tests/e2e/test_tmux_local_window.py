"""Done-when of issue 32 in the real program (tmux): twelve exchanges of
about 250 words with a llama-cpp-python server as it behaves by default (a
4k window said nowhere, an overflowing stream that just ends, a new request
cutting off the running one, no usage). Every answer arrives whole, the
conversation compacts, the footer shows the window learned, and no request
but those that taught it the window was over it."""

from __future__ import annotations

import time

import pytest
from fake_local_server import LocalServer

from core.compaction import prompts
from tests.e2e.conftest import tangents_program
from tests.fake_provider import FakeProvider
from tests.integration.test_llama_cpp_python_long import question

pytestmark = pytest.mark.slow

READY = "Message (enter sends"


def settled(tmux, server: FakeProvider, text: str, timeout: float = 120.0) -> str:
    """The pane once ``text`` shows and the server answers nothing."""
    deadline = time.monotonic() + timeout
    while True:
        screen = tmux.screen()
        if text in screen and not server.answering:
            return screen
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} did not settle; the pane shows:\n{screen}")
        time.sleep(0.1)


def test_sixteen_exchanges_on_a_4k_window_in_the_app(tmux, app_env) -> None:
    local = LocalServer("llama-cpp-python", 4_096, reply_chars=700)
    with FakeProvider(local=local) as server:
        base = f"{server.base_url}/v1"
        tmux.start([tangents_program(), "--model", "openai/smollm2", "--api-base", base], app_env)
        tmux.wait_for(READY)
        for number in range(16):
            tmux.paste(question(number))
            tmux.keys("Enter")
            screen = settled(tmux, server, f"echo: question {number}: ")
        bodies = [r.body for r in server.requests if isinstance(r.body, dict)]
    summaries = [b for b in bodies if prompts.SYSTEM[:60] in str(b.get("messages"))]
    assert summaries and all(b.get("max_tokens") for b in summaries), "never compacted"
    assert "/4.1k (" in screen and "/4.1k?" not in screen, screen  # the learned window
    assert local.interrupted == 0, "a request cut off another"
    assert local.cut_replies == 0, "an answer outgrew the window"
    assert local.refused <= 2, local.refused  # the overflow that taught it, and its probe
    assert "error" not in screen.lower(), screen
