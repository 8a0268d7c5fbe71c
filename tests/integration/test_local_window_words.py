"""What Tangents says when a llama-cpp-python server's window fills (issue 32):
the window, not the output token limit; print mode exits non-zero."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from fake_local_server import LocalServer

from tests.fake_provider import FakeProvider
from tests.integration.cli import outcome_lines, run

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
    assert len(outcome_lines(done.stderr)) == 1, done.stderr


def test_sessions_show_says_the_window_and_where_it_came_from(tmp_path: Path) -> None:
    """A guess before the server is heard from; then what its refusal said."""
    db = tmp_path / "t.db"
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider(local=local) as server:
        base = ["--db", str(db), "--model", "openai/smollm2"]
        first = run(*base, "--api-base", server.base_url + "/v1", "--json", "-p", "hello")
        assert first.returncode == 0, first.stderr
        session_id = json.loads(first.stdout.splitlines()[0])["id"]
        before = run("--db", str(db), "sessions", "show", session_id)
        assert "window   openai/smollm2: 8,192 tokens (a guess)" in before.stdout, before.stdout
        with sqlite3.connect(db) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO learned_windows (endpoint, model, tokens, source, learned_at)"
                " VALUES (?, 'openai/smollm2', 4096, 'refusal', '2026-11-28T04:00:00Z')",
                (server.base_url,),
            )
        after = run("--db", str(db), "sessions", "show", session_id)
        shown = run("--db", str(db), "sessions", "show", "--json", session_id)
    assert "window   openai/smollm2: 4,096 tokens (learned: refusal, 2026-11-28)" in after.stdout
    assert json.loads(shown.stdout)["windows"] == [
        {"model": "openai/smollm2", "tokens": 4_096, "source": "refusal"}
    ]
