"""``[sync] auto = true`` in the real ``tangents`` at 80x24 (issue 34): it
syncs at launch and after a reply, the footer says so, ``/sync`` answers in
one line, and machine B gets what was written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Tmux, tangents_program
from tests.sync.machines import Machine

pytestmark = pytest.mark.slow


def test_auto_sync_at_80_columns(tmp_path: Path, app_env: dict[str, str]) -> None:
    b = Machine.make(tmp_path, "b", tmp_path / "shared")
    from_b = b.ask("written on b")
    b.sync()
    config = Path(app_env["TANGENTS_HOME"]) / "config.toml"
    config.write_text(f"[sync]\nfolder = {json.dumps(str(b.folder))}\nauto = true\n")
    tmux = Tmux(80, 24)
    try:
        tmux.start([tangents_program(), "--model", "demo"], app_env)
        screen = tmux.wait_for("synced just now", timeout=60)
        assert "demo" in screen.splitlines()[-1] or "demo" in screen
        tmux.type("written on a")
        tmux.keys("Enter")
        tmux.wait_for("return a", timeout=60)  # the end of the demo reply
        tmux.type("/sync")
        tmux.keys("Enter")
        screen = tmux.wait_for("Synced:", timeout=60)
        assert "Traceback" not in screen
        tmux.type("/sessions")
        tmux.keys("Enter")
        screen = tmux.wait_for("2 sessions, newest first", timeout=30)
        assert "written on b" in screen and "from " in screen
        tmux.keys("Escape")
        tmux.keys("C-q")
        screen = tmux.wait_for("EXITED-0", timeout=60)
        assert "cut short" not in screen
    finally:
        tmux.kill()
    report = b.sync()
    assert report["received"]["sessions"] == 1
    assert len(b.session_ids() - {from_b}) == 1
