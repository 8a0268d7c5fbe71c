"""The round table in a real terminal (issue 35): two agents asked with
``@names``, then ``/round 2`` stopped with Esc while an agent speaks: what
arrived is saved under its author, no one else is asked, and the input takes
the next message."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_provider import Reply, Stall

from tests.e2e.conftest import Tmux, tangents_program
from tests.e2e.test_tmux import READY, sessions

pytestmark = pytest.mark.slow


def write_config(home: str, base_url: str) -> Path:
    config = Path(home) / "config.toml"
    config.write_text(
        "[[endpoints]]\n"
        'name = "lab"\n'
        f'base_url = "{base_url}/v1"\n'
        'models = ["critic-model", "poet-model"]\n'
        "[[agents]]\n"
        'name = "Critic"\n'
        'model = "lab/critic-model"\n'
        "[[agents]]\n"
        'name = "Poet"\n'
        'model = "lab/poet-model"\n'
    )
    return config


def replies(env: dict[str, str], session_id: str) -> list[tuple[str | None, str, str | None]]:
    """The saved replies of the session's path: (agent, text, stop reason)."""
    exported = subprocess.run(
        [tangents_program(), "sessions", "export", session_id, "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(exported.stdout)
    by_id = {e["id"]: e for e in doc["entries"]}
    path, entry_id = [], doc["session"]["leaf_id"]
    while entry_id is not None:
        path.append(by_id[entry_id])
        entry_id = by_id[entry_id]["parent_id"]
    out = []
    for entry in reversed(path):
        payload = entry["payload"]
        if entry["type"] == "message" and payload["role"] == "assistant":
            text = "".join(b.get("text", "") for b in payload["content"])
            out.append((payload.get("agent"), text, payload.get("stop_reason")))
    return out


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_esc_stops_a_round_and_the_next_message_is_taken(
    fake_provider, app_env, size: tuple[int, int]
) -> None:
    fake_provider.script_for("critic-model", Reply(text="Critic one."), Reply(text="Critic two."))
    fake_provider.script_for("critic-model", Reply(text="Critic three."))
    fake_provider.script_for("poet-model", Reply(text="Poet one."))
    fake_provider.script_for(
        "poet-model", Stall(seconds=60, after_chunks=3, reply=Reply(text="Poet half", chunk_size=3))
    )
    config = write_config(app_env["TANGENTS_HOME"], fake_provider.base_url)
    tmux = Tmux(*size)
    try:
        tmux.start([tangents_program(), "--config", str(config), "--model", "demo"], app_env)
        tmux.wait_for(READY)
        tmux.type("@Critic @Poet judge this line")
        tmux.keys("Enter")
        tmux.wait_for("Poet one.", timeout=60)
        tmux.type("/round 2")
        tmux.keys("Enter")
        tmux.wait_for("Critic two.", timeout=60)
        tmux.wait_for("Poet h", timeout=60)  # the Poet is speaking: its stream stalls here
        tmux.keys("Escape")
        tmux.wait_for("■ stopped", timeout=60)
        tmux.type("@Critic last word")
        tmux.keys("Enter")
        screen = tmux.wait_for("Critic three.", timeout=60)
        assert "◆ Critic" in screen and "◆ Poet" in screen
        tmux.keys("C-q")
        tmux.wait_for("EXITED-0", timeout=60)
    finally:
        tmux.kill()
    asked = [r.body["model"] for r in fake_provider.requests]
    assert asked == ["critic-model", "poet-model", "critic-model", "poet-model", "critic-model"]
    [listed] = sessions(app_env)
    saved = replies(app_env, listed["id"])
    assert [agent for agent, _, _ in saved] == ["Critic", "Poet", "Critic", "Poet", "Critic"]
    assert [text for _, text, _ in saved] == [
        "Critic one.",
        "Poet one.",
        "Critic two.",
        "Poet h",  # what arrived before the stall: kept
        "Critic three.",
    ]
    assert saved[3][2] == "aborted"
