"""``tangents -r`` in a real terminal: the picker opens, a search finds a
session, Enter opens it."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.e2e.conftest import tangents_program

pytestmark = pytest.mark.slow


def import_chat(env: dict[str, str], user: str, answer: str) -> None:
    chat = json.dumps([{"role": "user", "content": user}, {"role": "assistant", "content": answer}])
    subprocess.run(
        [tangents_program(), "sessions", "import", "-"],
        input=chat,
        env=env,
        text=True,
        capture_output=True,
        check=True,
    )


def test_resume_picker_search_and_open(tmux, app_env) -> None:
    import_chat(
        app_env, "Which wood for a violin top?", "Spruce, quarter-sawn, is the classic choice."
    )
    import_chat(app_env, "How long to boil an egg?", "Nine minutes for a firm yolk.")
    tmux.start([tangents_program(), "-r", "--model", "demo"], app_env)
    screen = tmux.wait_for("2 sessions, newest first")
    assert screen.index("How long to boil an egg?") < screen.index("Which wood for a violin top?")
    tmux.type("violi")
    tmux.wait_for("1 session matching")
    tmux.keys("Enter")
    screen = tmux.wait_for("Spruce, quarter-sawn, is the classic choice.")
    assert "Nine minutes" not in screen
    tmux.keys("C-q")
    tmux.wait_for("EXITED-0")
