"""The real ``tangents`` program: a Claude Code file imported with ``auto``,
a session exported to pi and imported back."""

from __future__ import annotations

import json
from pathlib import Path

from tests.formats.helpers import FIXTURES
from tests.integration.cli import run


def test_claude_import_then_pi_export_and_back(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    done = run(
        "--db", db, "sessions", "import", str(FIXTURES / "claude" / "sidechain.jsonl"), "--json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["format"] == "claude" and report["branches"] == 2
    assert report["title"] == "Finding frost-hardy trees with a sub-agent"
    assert report["notes"] == [
        "kept 1 sub-agent (sidechain) run as branches from where they started",
        "priced 4 replies from litellm's price table (Claude Code records tokens, not costs)",
    ]
    exported = run("--db", db, "sessions", "export", report["id"], "--format", "pi")
    assert exported.returncode == 0, exported.stderr
    header = json.loads(exported.stdout.splitlines()[0])
    assert header["type"] == "session" and header["version"] == 3
    pi_file = tmp_path / "s.jsonl"
    pi_file.write_text(exported.stdout)
    again = run("--db", db, "sessions", "import", str(pi_file), "--json")
    assert again.returncode == 0, again.stderr
    second = json.loads(again.stdout)
    assert second["format"] == "pi" and second["notes"] == []
    assert {k: second[k] for k in ("messages", "branches")} == {
        k: report[k] for k in ("messages", "branches")
    }


def test_a_truncated_claude_file_writes_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    text = (FIXTURES / "claude" / "linear.jsonl").read_text()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: len(text) - 40])
    done = run("--db", db, "sessions", "import", str(cut))
    assert done.returncode == 1
    assert done.stderr.strip().endswith("(nothing was imported)")
    assert "line 6:" in done.stderr and "truncated" in done.stderr
    listed = run("--db", db, "sessions", "list", "--json")
    assert json.loads(listed.stdout) == []


def test_html_export_from_the_command_line(tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    done = run("--db", db, "sessions", "import", str(FIXTURES / "claude" / "tools.jsonl"), "--json")
    session_id = json.loads(done.stdout)["id"]
    page = run("--db", db, "sessions", "export", session_id, "--format", "html")
    assert page.returncode == 0, page.stderr
    assert page.stdout.startswith("<!DOCTYPE html>")
    assert "Result of Read" in page.stdout and "data:image/png;base64," in page.stdout
