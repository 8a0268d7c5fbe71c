"""Hostile text (a lone carriage return, C1 controls, bidi overrides) stored in
sessions never reaches the terminal raw from the ``sessions`` commands; JSON
output escapes it and still parses back to the exact text."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_provider import Reply

from tests.integration.cli import anthropic_env, run

BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# A title cannot hold a line break (it is the first line of the prompt), a reply can.
TITLE = "invoice \u202egnp.exe\u202c \x9b31m red \x9d0;pwned\x9c done"
REPLY = "safe: rm -rf ~\rls -la \u2066hidden\u2069 \x85 end"


def leaks(text: str) -> list[str]:
    """What a terminal would obey: C1 characters, bidi controls, lone carriage returns."""
    found = [f"U+{ord(c):04X}" for c in text if 0x80 <= ord(c) <= 0x9F or c in BIDI_CONTROLS]
    return found + (["lone CR"] if re.search("\r(?!\n)", text) else [])


def hostile_session(fake_provider, db: Path) -> str:
    fake_provider.script(Reply(text=REPLY))
    env = anthropic_env(fake_provider.base_url)
    result = run("--db", str(db), "-m", "anthropic/claude-test", "-p", TITLE, env=env)
    assert result.returncode == 0, result.stderr
    listed = run("--db", str(db), "sessions", "list", "--json")
    return json.loads(listed.stdout)[0]["id"]


def test_sessions_list_and_search_show_no_controls(fake_provider, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    session_id = hostile_session(fake_provider, db)

    listed = run("--db", str(db), "sessions", "list")
    assert listed.returncode == 0, listed.stderr
    assert leaks(listed.stdout) == [], listed.stdout
    assert "invoice ⟨U+202E⟩gnp.exe⟨U+202C⟩" in listed.stdout

    as_json = run("--db", str(db), "sessions", "list", "--json")
    assert leaks(as_json.stdout) == [], as_json.stdout
    assert json.loads(as_json.stdout)[0]["title"] == TITLE

    found = run("--db", str(db), "sessions", "search", "safe")
    assert found.returncode == 0, found.stderr
    assert leaks(found.stdout) == [], found.stdout
    assert "rm -rf ~" in found.stdout and "ls -la" in found.stdout

    found_json = run("--db", str(db), "sessions", "search", "safe", "--json")
    assert leaks(found_json.stdout) == [], found_json.stdout
    [hit] = json.loads(found_json.stdout)
    assert hit["session_id"] == session_id and "\u2066hidden\u2069" in hit["snippet"]


def test_json_exports_escape_controls_and_import_back_exactly(fake_provider, tmp_path) -> None:
    db = tmp_path / "t.db"
    session_id = hostile_session(fake_provider, db)
    for format in ("json", "openai", "mplp"):
        exported = run("--db", str(db), "sessions", "export", session_id, "--format", format)
        assert exported.returncode == 0, exported.stderr
        assert leaks(exported.stdout) == [], (format, exported.stdout)
        assert REPLY in exported.stdout.encode().decode("unicode_escape") or format == "mplp"
    exported = run("--db", str(db), "sessions", "export", session_id)
    document = json.loads(exported.stdout)
    assert document["session"]["title"] == TITLE
    replies = [e["payload"] for e in document["entries"] if e["payload"].get("role") == "assistant"]
    assert replies[0]["content"][0]["text"] == REPLY
