"""Print mode against a local server with a small window (issue #14): the
window is asked once, reported in ``--json``, and remembered in the database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from fake_local_server import LocalServer

from tests.fake_provider import FakeProvider
from tests.integration.cli import run


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_the_window_is_learned_once_and_reported(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    local = LocalServer("vllm", 4_096)
    with FakeProvider(local=local) as server:
        base = ["--db", str(db), "--model", "openai/smollm2", "--api-base", server.base_url + "/v1"]
        first = run(*base, "--json", "-p", "hello")
        assert first.returncode == 0, first.stderr
        learned = [e for e in events(first.stdout) if e["type"] == "window_learned"]
        assert learned == [
            {"type": "window_learned", "model": "openai/smollm2", "tokens": 4_096, "source": "vllm"}
        ]
        asked = list(local.asked)
        second = run("--db", str(db), "-c", "--json", "-p", "again")
        assert second.returncode == 0, second.stderr
        assert local.asked == asked, "asked again instead of reading the database"
        assert [e for e in events(second.stdout) if e["type"] == "window_learned"] == learned
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT endpoint, model, tokens, source FROM learned_windows"
        ).fetchall()
    assert rows == [(server.base_url, "openai/smollm2", 4_096, "vllm")]
