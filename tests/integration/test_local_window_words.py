"""What Tangents says when a llama-cpp-python server's window fills (issue 32):
the window, not the output token limit; print mode exits non-zero."""

from __future__ import annotations

from pathlib import Path

from fake_local_server import LocalServer

from tests.fake_provider import FakeProvider
from tests.integration.cli import run

WORDS = "the garden by the sea has cats and a long wall of old stones "


def test_a_reply_stopped_by_the_full_window_says_so_and_fails(tmp_path: Path) -> None:
    """The prompt fits the 4,096-token window, the long answer does not: the
    server stops it with finish_reason "length", as llama-cpp-python does."""
    local = LocalServer("llama-cpp-python", 4_096, reply_chars=8_000)
    with FakeProvider(local=local) as server:
        base = ["--db", str(tmp_path / "t.db"), "--model", "openai/smollm2"]
        base += ["--api-base", server.base_url + "/v1"]
        done = run(*base, "-p", "echo this back: " + WORDS * 200)
    assert local.cut_replies == 1
    assert done.returncode == 1, done.stderr
    assert "context window" in done.stderr and "is full" in done.stderr, done.stderr
    assert "output token limit" not in done.stderr
    assert "retry" not in done.stderr and "/compact" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
