"""``/compare`` in a real terminal: two models (from the config) answer at
once, side by side, and Enter on the second column keeps it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_provider import Reply

from tests.e2e.conftest import tangents_program
from tests.e2e.test_tmux import READY, sessions

pytestmark = pytest.mark.slow


def test_compare_two_models_and_keep_the_second(tmux, fake_provider, app_env) -> None:
    config = Path(app_env["TANGENTS_HOME"]) / "config.toml"
    config.write_text('[compare]\nmodels = ["openai/alpha", "openai/beta"]\n')
    fake_provider.script_for("alpha", Reply(text="Alpha says: spruce.", chunk_size=3, delay=0.02))
    fake_provider.script_for("beta", Reply(text="Beta says: maple.", chunk_size=3, delay=0.02))
    tmux.start(
        [tangents_program(), "--model", "openai/x", "--api-base", f"{fake_provider.base_url}/v1"],
        app_env,
    )
    tmux.wait_for(READY)
    tmux.type("/compar")
    tmux.keys("Tab")  # completes the command
    tmux.wait_for("/compare")
    tmux.keys("Enter")  # no models named: the config's
    tmux.wait_for("the next message goes to openai/alpha, openai/beta")
    tmux.type("Which wood for a violin top?")
    tmux.keys("Enter")
    tmux.wait_for("Alpha says: spruce.")
    screen = tmux.wait_for("Beta says: maple.")
    assert "Compare · Which wood for a violin top?" in screen
    assert "openai/alpha" in screen and "openai/beta" in screen
    tmux.wait_for("esc close")  # both finished
    tmux.keys("Tab")
    tmux.keys("Enter")
    screen = tmux.wait_for("── model: openai/beta")  # the chat is on the kept branch
    assert "Beta says: maple." in screen and "Alpha says" not in screen
    tmux.keys("C-q")
    tmux.wait_for("EXITED-0")
    [listed] = sessions(app_env)
    exported = subprocess.run(
        [tangents_program(), "sessions", "export", listed["id"], "--format", "json"],
        env=app_env,
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(exported.stdout)
    by_id = {e["id"]: e for e in doc["entries"]}
    leaf = by_id[doc["session"]["leaf_id"]]["payload"]
    assert leaf["model"] == "openai/beta" and leaf["content"][0]["text"] == "Beta says: maple."
    assert sorted(r.body["model"] for r in fake_provider.requests) == ["alpha", "beta"]
