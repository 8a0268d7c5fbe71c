"""The installed ``tangents`` program in a real terminal (tmux): type, send, read."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from fake_provider import Reply

from tests.e2e.conftest import tangents_program

pytestmark = pytest.mark.slow

READY = "Message (enter sends"


def sessions(env: dict[str, str]) -> list[dict]:
    result = subprocess.run(
        [tangents_program(), "sessions", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_a_message_gets_a_streamed_reply_and_is_saved(tmux, fake_provider, app_env) -> None:
    fake_provider.script(
        Reply(text="Hello from the fake provider, streamed in pieces.", chunk_size=5, delay=0.02)
    )
    tmux.start(
        [tangents_program(), "--model", "openai/x", "--api-base", f"{fake_provider.base_url}/v1"],
        app_env,
    )
    screen = tmux.wait_for(READY)
    assert "openai/x" in screen
    tmux.type("hello")
    tmux.keys("Enter")
    tmux.wait_for("Hello from the fake provider, streamed in pieces.")
    tmux.keys("C-q")
    tmux.wait_for("EXITED-0")
    [listed] = sessions(app_env)
    assert listed["title"] == "hello" and listed["message_count"] == 2
    assert fake_provider.last_request.body["messages"][-1]["content"] in (
        "hello",
        [{"type": "text", "text": "hello"}],
    )


def test_continue_shows_the_conversation_and_escape_stops_a_reply(
    tmux, fake_provider, app_env
) -> None:
    base = f"{fake_provider.base_url}/v1"
    fake_provider.script(
        Reply(text="First answer."), Reply(text="slow " * 400, chunk_size=5, delay=0.05)
    )
    tmux.start([tangents_program(), "--model", "openai/x", "--api-base", base], app_env)
    tmux.wait_for(READY)
    tmux.type("first")
    tmux.keys("Enter")
    tmux.wait_for("First answer.")
    tmux.type("second")
    tmux.keys("Enter")
    tmux.wait_for("slow slow")
    tmux.keys("Escape")
    tmux.wait_for("stopped")
    tmux.keys("C-q")
    tmux.wait_for("EXITED-0")

    second = type(tmux)()
    try:
        second.start([tangents_program(), "-c", "--api-base", base], app_env)
        screen = second.wait_for("First answer.")
        assert "second" in screen and READY in screen
    finally:
        second.kill()


def test_the_draft_opens_in_the_editor(tmux, tmp_path, app_env) -> None:
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\np = sys.argv[1]\nopen(p, 'a').write(' and more from the editor')\n"
    )
    env = {**app_env, "EDITOR": f"{sys.executable} {editor}"}
    tmux.start([tangents_program(), "--model", "demo"], env)
    tmux.wait_for(READY)
    tmux.type("draft")
    tmux.keys("C-e")
    tmux.wait_for("draft and more from the editor")


def test_a_bad_database_is_one_line_before_the_app_starts(tmux, tmp_path, app_env) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 50)
    tmux.start([tangents_program(), "--db", str(bad)], app_env)
    screen = tmux.wait_for("EXITED-2")
    assert f"tangents: {bad}" in screen


def test_the_launch_probe_leaves_the_pane_title_alone(tmux, app_env) -> None:
    """tmux took the kitty graphics query (an APC) for a title: ``Gi=31,s=1,...``."""
    tmux.start([tangents_program(), "--model", "demo"], app_env)
    tmux.wait_for(READY)
    assert "Gi=" not in tmux.pane_title()
    tmux.keys("C-q")
    tmux.wait_for("EXITED-0")
    assert "Gi=" not in tmux.pane_title()


def test_the_title_the_pane_had_is_back_after_quitting(tmux, app_env) -> None:
    """Issue 33 item 5: whatever retitles the pane during a run (a launch
    probe's answer taken as a title was one) is undone on exit."""
    titled = 'printf "\\033]2;before\\033\\\\"; exec "$0" --model demo'
    tmux.start(["sh", "-c", titled, tangents_program()], app_env)
    tmux.wait_for(READY)
    tmux._tmux("select-pane", "-t", tmux.name, "-T", "changed during the run")
    assert tmux.pane_title().strip() == "changed during the run"
    tmux.keys("C-q")
    tmux.wait_for("EXITED-0")
    assert tmux.pane_title().strip() == "before"


def test_a_draft_typed_then_quit_is_kept_and_comes_back(tmux, app_env) -> None:
    """Issue #33: a draft was lost without a word on quit and did not come back
    when the session was resumed. Quit at once after typing (before the
    debounced save): the exit writes it, says so, and ``-c`` brings it back."""
    tmux.start([tangents_program(), "--model", "demo"], app_env)
    tmux.wait_for(READY)
    tmux.type("hello")
    tmux.wait_for("hello")
    tmux.keys("Enter")
    deadline = time.monotonic() + 30
    while not sessions(app_env):  # the message is saved: the session is
        assert time.monotonic() < deadline, tmux.screen()
        time.sleep(0.1)
    tmux.type("half a thought")
    tmux.wait_for("half a thought")
    tmux.keys("C-q")
    screen = tmux.wait_for("EXITED-0")
    assert "Your unsent draft is kept with the session." in screen
    tmux.kill()
    again = type(tmux)()
    try:
        again.start([tangents_program(), "-c"], app_env)
        again.wait_for("draft is back")
        assert "half a thought" in again.screen()
    finally:
        again.kill()
