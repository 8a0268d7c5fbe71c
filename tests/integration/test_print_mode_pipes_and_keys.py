"""Print mode into a closed pipe and without a key (issue #15's steps).

Before: ``tangents -p "hello" | head -1`` ended in a BrokenPipeError traceback
and the reply was not saved; a run without a key said "the API key was
rejected" though no request was made, and left a session behind.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fake_provider import Reply

from tests.integration.cli import anthropic_env, export, run, sessions, tangents_command

CLAUDE = "anthropic/claude-test"
LINES = "\n".join(f"line {i} of a long answer" for i in range(2_000))


def test_a_closed_pipe_ends_quietly_and_the_reply_is_saved(fake_provider, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    fake_provider.script(Reply(text=LINES))
    read_end, write_end = os.pipe()
    reader = subprocess.Popen(["head", "-1"], stdin=read_end, stdout=subprocess.PIPE)
    writer = subprocess.Popen(
        [*tangents_command(), "--db", str(db), "-m", CLAUDE, "-p", "count"],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env={**os.environ, **anthropic_env(fake_provider.base_url)},
    )
    os.close(read_end)  # only the two programs hold the pipe now
    os.close(write_end)
    first, _ = reader.communicate(timeout=60)
    _, errors = writer.communicate(timeout=60)
    assert first == b"line 0 of a long answer\n"
    assert writer.returncode in (0, 141), errors
    assert b"Traceback" not in errors and b"BrokenPipe" not in errors, errors
    [listed] = sessions(db)
    doc = export(db, listed["id"])
    replies = [
        e["payload"] for e in doc["entries"] if e["type"] == "message"
        if e["payload"]["role"] == "assistant"
    ]  # fmt: skip
    assert [r["content"][0]["text"] for r in replies] == [LINES]
    assert replies[0]["stop_reason"] == "stop"


def test_a_missing_key_is_told_before_anything_is_written(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    env = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
    for model, variable in (("openai/gpt-4o", "OPENAI_API_KEY"), (CLAUDE, "ANTHROPIC_API_KEY")):
        done = run("--db", str(db), "-m", model, "-p", "hello", env=env)
        provider = model.split("/")[0]
        assert done.returncode == 2
        assert done.stderr == f"tangents: no API key for {provider}: set {variable}\n"
    assert not db.exists() or sessions(db) == []
