"""Tokens a server does not count are counted here, marked ``~`` (issue 32):
llama-cpp-python sends no usage, so ``sessions show`` said "input 0 · output 0"
for a whole conversation. Through the real program, a real database and the
fake imitating each server over HTTP."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_local_server import LocalServer

from tests.fake_provider import FakeProvider
from tests.integration.cli import run

WORDS = "the garden by the sea has cats and a long wall of old stones "


def converse(db: Path, local: LocalServer) -> tuple[str, dict]:
    """Two exchanges in print mode: the session's id, and the usage the first
    reply's ``--json`` event gave."""
    with FakeProvider(local=local) as server:
        base = ["--db", str(db), "--model", "openai/smollm2"]
        base += ["--api-base", server.base_url + "/v1"]
        first = run(*base, "--json", "-p", "hello " + WORDS * 10)
        assert first.returncode == 0, first.stderr
        session_id = json.loads(first.stdout.splitlines()[0])["id"]
        second = run(*base, "-c", "-p", "and then? " + WORDS)
        assert second.returncode == 0, second.stderr
    events = [json.loads(line) for line in first.stdout.splitlines()]
    saved = [
        entry
        for event in events
        if event["type"] == "entries_saved"
        for entry in event["entries"]
        if entry.get("role") == "assistant"
    ]
    return session_id, saved[-1]["usage"]


def test_sessions_show_marks_what_it_counted_itself(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    session_id, usage = converse(db, LocalServer("llama-cpp-python", 8_192))
    assert usage["estimated"] is True and usage["output_tokens"] > 0
    shown = run("--db", str(db), "sessions", "show", session_id)
    assert shown.returncode == 0, shown.stderr
    found = re.search(r"input ~([\d,]+) · output ~([\d,]+)", shown.stdout)
    assert found is not None, shown.stdout
    sent, written = (int(n.replace(",", "")) for n in found.groups())
    # Two requests of at least the 130-word first message; two ~300-character answers.
    assert sent > 2 * len("hello " + WORDS * 10) // 4 and 100 < written < 400
    as_json = json.loads(run("--db", str(db), "sessions", "show", "--json", session_id).stdout)
    assert as_json["usage_total"]["estimated"] is True
    assert as_json["usage_total"]["input_tokens"] == sent


def test_a_server_that_counts_gets_no_mark(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    session_id, usage = converse(db, LocalServer("llama.cpp", 8_192))
    assert "estimated" not in usage
    shown = run("--db", str(db), "sessions", "show", session_id)
    assert re.search(r"input [1-9][\d,]* · output [1-9]", shown.stdout), shown.stdout
    assert "~" not in shown.stdout
    as_json = json.loads(run("--db", str(db), "sessions", "show", "--json", session_id).stdout)
    assert "estimated" not in as_json["usage_total"]
