"""A draft survives a crash (issue 33): the real ``tangents`` in tmux, a draft
typed into a saved session, the process killed with SIGKILL once the draft is
in the database, and the session resumed: the draft is back in the input."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.e2e.conftest import tangents_program

pytestmark = pytest.mark.slow

READY = "Message (enter sends"
DRAFT = "half a thought about spruce"


def import_chat(env: dict[str, str], db: Path) -> str:
    """A saved session with one exchange; its id."""
    chat = json.dumps(
        [
            {"role": "user", "content": "Which wood for a violin top?"},
            {"role": "assistant", "content": "Spruce, quarter-sawn, is the classic choice."},
        ]
    )
    subprocess.run(
        [tangents_program(), "--db", str(db), "sessions", "import", "-"],
        input=chat,
        env=env,
        text=True,
        capture_output=True,
        check=True,
    )
    listed = subprocess.run(
        [tangents_program(), "--db", str(db), "sessions", "list", "--json"],
        env=env,
        text=True,
        capture_output=True,
        check=True,
    )
    [session] = json.loads(listed.stdout)
    return str(session["id"])


def saved_draft(db: Path, session_id: str) -> str:
    """The draft the database holds for the session (read by a connection of our own)."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        row = conn.execute(
            "SELECT text FROM drafts WHERE session_key = ?", (session_id,)
        ).fetchone()
    return row[0] if row else ""


def test_a_draft_comes_back_after_the_program_is_killed(tmux, tmp_path, app_env) -> None:
    db = tmp_path / "crash.db"
    session_id = import_chat(app_env, db)
    command = [tangents_program(), "--db", str(db), "--model", "demo", "--session", session_id]
    tmux.start(command, app_env)
    tmux.wait_for("Spruce, quarter-sawn")
    tmux.wait_for(READY)
    tmux.type(DRAFT)
    tmux.wait_for(DRAFT)
    deadline = time.monotonic() + 30
    while saved_draft(db, session_id) != DRAFT:  # saved once typing stops
        assert time.monotonic() < deadline, f"the draft was not saved: {tmux.screen()}"
        time.sleep(0.1)
    os.kill(tmux.program_pid(), signal.SIGKILL)
    tmux.wait_for("EXITED-137")
    tmux.kill()

    again = type(tmux)()
    try:
        again.start(command, app_env)
        again.wait_for("Spruce, quarter-sawn")
        screen = again.wait_for(DRAFT)
        assert screen.count(DRAFT) == 1
        prompt = [line for line in screen.splitlines() if DRAFT in line]
        assert prompt and "Which wood" not in prompt[0]
    finally:
        again.kill()
