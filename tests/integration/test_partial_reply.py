"""A reply killed mid-stream keeps what had arrived (issue #37, "Smaller").

Before, the text streamed before a SIGKILL was lost and the session was left
with two user messages in a row. Now the reply is checkpointed as it streams;
the next open turns the checkpoint into an incomplete reply, and the next
request carries it.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply, Stall

from tests.integration.cli import openai_env, run, tangents_command
from tests.integration.test_crash_and_concurrency import check_database

pytestmark = pytest.mark.slow

MODEL = "openai/slow"
WORDS = [f"w{i:03d}" for i in range(400)]
STORY = " ".join(WORDS)
SENT_BEFORE_KILL = 100
"""Chunks of 5 characters, 0.05 s apart: 5 s of reply, past the first checkpoints."""


def wait_until(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def asked_for_a_story(fake_provider: FakeProvider, db: Path) -> subprocess.Popen[bytes]:
    """``tangents -p`` asking the fake provider for a story, in its own process group."""
    args = ["--db", str(db), "-m", MODEL, "--api-base", fake_provider.base_url + "/v1"]
    return subprocess.Popen(
        tangents_command() + args + ["-p", "tell me a story"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **openai_env()},
        start_new_session=True,
    )


def killed_mid_reply(fake_provider: FakeProvider, db: Path) -> None:
    """``tangents -p`` asked for a slow story and SIGKILLed (its whole process
    group) once the server has sent :data:`SENT_BEFORE_KILL` chunks."""
    fake_provider.script(Reply(text=STORY, chunk_size=5, delay=0.05))
    process = asked_for_a_story(fake_provider, db)
    try:
        wait_until(
            lambda: fake_provider.chunks_sent >= SENT_BEFORE_KILL or process.poll() is not None
        )
        assert process.poll() is None, process.communicate()[1].decode(errors="replace")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL


def saved_texts(db: Path) -> str:
    """Every payload in the file, entries or not."""
    conn = sqlite3.connect(db)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    found = []
    for table in tables:
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        if "payload" in columns:
            found += [r[0] for r in conn.execute(f"SELECT payload FROM {table}")]
    conn.close()
    return "\n".join(found)


@pytest.mark.parametrize("resume", ["--session", "-c"])
def test_sigkill_mid_reply_keeps_the_partial_reply_for_the_next_request(
    fake_provider: FakeProvider, tmp_path: Path, resume: str
) -> None:
    db = tmp_path / "partial.db"
    killed_mid_reply(fake_provider, db)
    check_database(db).close()
    assert WORDS[0] in saved_texts(db), "the text streamed before the kill is in the file"

    [session_id] = [r[0] for r in sqlite3.connect(db).execute("SELECT id FROM sessions")]
    fake_provider.script(Reply(text="and then?"))
    result = run(
        "--db", str(db), "-m", MODEL, "--api-base", fake_provider.base_url + "/v1",
        *([resume, session_id] if resume == "--session" else [resume]), "-p", "next",
        env=openai_env(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    sent = fake_provider.last_request.body["messages"]
    roles = [m["role"] for m in sent if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"], roles
    partial = sent[roles.index("assistant")]["content"]
    partial = partial if isinstance(partial, str) else "".join(p["text"] for p in partial)
    assert partial.startswith(" ".join(WORDS[:3])) and STORY.startswith(partial.strip())
    assert sent[-1]["content"] in ("next", [{"type": "text", "text": "next"}])

    conn = check_database(db)
    replies = [
        json.loads(p)
        for (p,) in conn.execute("SELECT payload FROM entries WHERE type = 'message' ORDER BY id")
    ]
    conn.close()
    assert [r["role"] for r in replies] == ["user", "assistant", "user", "assistant"]
    assert replies[1]["stop_reason"] == "interrupted"


def test_sigkill_right_after_the_first_chunk_keeps_it(
    fake_provider: FakeProvider, tmp_path: Path
) -> None:
    """The first text is saved when it arrives, not after the first checkpoint
    interval: the server stalls after it far longer than the test waits."""
    db = tmp_path / "first.db"
    first = WORDS[0]
    fake_provider.script(Stall(seconds=120, after_chunks=2, reply=Reply(text=STORY, chunk_size=5)))
    process = asked_for_a_story(fake_provider, db)
    try:
        wait_until(lambda: fake_provider.chunks_sent >= 2 or process.poll() is not None)
        wait_until(lambda: db.exists() and first in saved_texts(db), timeout=20)
        assert process.poll() is None, process.communicate()[1].decode(errors="replace")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)

    [session_id] = [r[0] for r in sqlite3.connect(db).execute("SELECT id FROM sessions")]
    fake_provider.script(Reply(text="and then?"))
    result = run(
        "--db", str(db), "-m", MODEL, "--api-base", fake_provider.base_url + "/v1",
        "--session", session_id, "-p", "next", env=openai_env(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    conn = check_database(db)
    roles = [
        json.loads(p)["role"]
        for (p,) in conn.execute("SELECT payload FROM entries WHERE type = 'message' ORDER BY id")
    ]
    conn.close()
    assert roles == ["user", "assistant", "user", "assistant"], roles
    sent = fake_provider.last_request.body["messages"]
    assert first in json.dumps(sent), "the partial reply went with the next request"
