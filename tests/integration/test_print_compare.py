"""``tangents -p --compare`` end to end: the real program, a real database, the
fake provider answering as two (or three) models; and the Markdown export of
every branch, and the alternatives count of ``sessions list --json``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fake_provider import Fail, Reply

from tests.integration.cli import anthropic_env, export, run, sessions, tangents_command

CLAUDE = "anthropic/claude-test"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def compare(db: Path, base_url: str, models: str, *extra: str):
    return run(
        "--db", str(db), "--api-base", base_url, "-p", "Best wood for a violin top?",
        "--compare", models, *extra,
        env={**anthropic_env(base_url), "OPENAI_API_KEY": "sk-test-0000000000000000"},
    )  # fmt: skip


def test_replies_come_one_after_another_and_are_saved_as_alternatives(fake_provider, db) -> None:
    fake_provider.script_for("alpha", Reply(text="Spruce, quarter-sawn.", chunk_size=2, delay=0.01))
    fake_provider.script_for("claude-test", Reply(text="Spruce.", chunk_size=2))
    result = compare(db, fake_provider.base_url, f"openai/alpha,{CLAUDE}")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "## openai/alpha\n\nSpruce, quarter-sawn.\n\n## anthropic/claude-test\n\nSpruce.\n"
    )
    [listed] = sessions(db)
    assert listed["message_count"] == 3 and listed["alternatives"] == 1
    doc = export(db, listed["id"])
    by_id = {e["id"]: e for e in doc["entries"]}
    replies = [
        e for e in doc["entries"] if e["type"] == "message" and e["payload"]["role"] == "assistant"
    ]
    assert sorted(r["payload"]["model"] for r in replies) == sorted(["openai/alpha", CLAUDE])
    assert all("ttft" in r["payload"]["meta"]["timing"] for r in replies)

    # both answer the one question (the second behind its model change)
    def question(entry):
        while entry["type"] != "message" or entry["payload"]["role"] != "user":
            entry = by_id[entry["parent_id"]]
        return entry["id"]

    assert len({question(r) for r in replies}) == 1
    parents = {r["payload"]["model"]: by_id[r["parent_id"]]["type"] for r in replies}
    assert parents == {"openai/alpha": "message", CLAUDE: "model_change"}
    # the position is on the first model's reply
    assert by_id[doc["session"]["leaf_id"]]["payload"]["model"] == "openai/alpha"


def test_a_failing_model_is_told_on_stderr_and_the_other_still_answers(fake_provider, db) -> None:
    fake_provider.script_for("alpha", Fail(400, message="no such model: alpha"))
    fake_provider.script_for("beta", Reply(text="Maple for the back."))
    result = compare(db, fake_provider.base_url, "openai/alpha,openai/beta")
    assert result.returncode == 1
    assert "## openai/beta\n\nMaple for the back.\n" in result.stdout
    assert "tangents: openai/alpha:" in result.stderr and "no such model" in result.stderr
    assert "Traceback" not in result.stderr


def test_wrong_model_counts_are_one_line(fake_provider, db) -> None:
    result = compare(db, fake_provider.base_url, "openai/alpha")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "tangents: --compare needs 2 to 4 different models, comma-separated"
    )
    assert run("--compare", "a,b", "--db", str(db)).stderr.startswith(
        "tangents: --compare goes with -p"
    )


def test_markdown_export_of_all_branches_shows_the_other_answers(fake_provider, db) -> None:
    fake_provider.script_for("alpha", Reply(text="Spruce, quarter-sawn."))
    fake_provider.script_for("beta", Reply(text="Maple."))
    fake_provider.script_for("gamma", Reply(text="Cedar, sometimes."))
    assert (
        compare(db, fake_provider.base_url, "openai/alpha,openai/beta,openai/gamma").returncode == 0
    )
    [listed] = sessions(db)
    plain = run("--db", str(db), "sessions", "export", listed["id"], "--format", "markdown")
    assert "Spruce, quarter-sawn." in plain.stdout and "Maple." not in plain.stdout
    every = run(
        "--db", str(db), "sessions", "export", listed["id"], "--format", "markdown", "--all-branches"
    )  # fmt: skip
    assert every.returncode == 0, every.stderr
    text = every.stdout
    assert text.startswith(plain.stdout)
    assert text.count("# Alternative branch") == 2
    assert "# Alternative branch 2, after “Best wood for a violin top?”" in text
    assert text.index("Maple.") < text.index("Cedar, sometimes.")
    assert "## Assistant (openai/beta)" in text
    wrong = run("--db", str(db), "sessions", "export", listed["id"], "--all-branches")
    assert wrong.returncode == 2 and "--all-branches goes with --format markdown" in wrong.stderr


def test_a_closed_pipe_still_saves_every_reply(fake_provider, db) -> None:
    long = "\n".join(f"line {i} of the answer" for i in range(3000))
    fake_provider.script_for("alpha", Reply(text=long, chunk_size=64))
    fake_provider.script_for("beta", Reply(text=long, chunk_size=64))
    result = subprocess.run(
        f"{' '.join(tangents_command())} --db {db} --api-base {fake_provider.base_url} "
        "-p question --compare openai/alpha,openai/beta | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **anthropic_env(fake_provider.base_url), "OPENAI_API_KEY": "sk-test-0"},
    )
    assert result.stdout == "## openai/alpha\n"
    assert "Traceback" not in result.stderr and "Error" not in result.stderr
    [listed] = sessions(db)
    doc = export(db, listed["id"])
    replies = [e["payload"] for e in doc["entries"] if e["type"] == "message"][1:]
    assert sorted(r["model"] for r in replies) == ["openai/alpha", "openai/beta"]
    assert all(r["content"][0]["text"] == long and r["stop_reason"] == "stop" for r in replies)


def test_json_lines_tag_each_event_with_its_column(fake_provider, db) -> None:
    fake_provider.script_for("alpha", Reply(text="Spruce.", chunk_size=2, delay=0.01))
    fake_provider.script_for("beta", Fail(400, message="no such model: beta"))
    result = compare(db, fake_provider.base_url, "openai/alpha,openai/beta", "--json")
    assert result.returncode == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    [listed] = sessions(db)
    assert lines[0] == {"type": "session", "id": listed["id"]}
    text = "".join(e["text"] for e in lines if e["type"] == "text" and e["column"] == 0)
    assert text == "Spruce."
    assert all(e["model"] == "openai/alpha" for e in lines if e["type"] == "text")
    ended = {e["column"]: e for e in lines if e["type"] == "column_ended"}
    assert ended[0]["model"] == "openai/alpha" and ended[0]["stop_reason"] == "stop"
    assert ended[0]["error"] is None and ended[0]["seconds"] >= ended[0]["ttft"] >= 0
    assert ended[1]["stop_reason"] == "error" and "no such model" in ended[1]["error"]
    saved = [x for e in lines if e["type"] == "entries_saved" for x in e["entries"]]
    replies = {x["id"]: x for x in saved if x.get("role") == "assistant"}
    assert {ended[0]["entry_id"], ended[1]["entry_id"]} == set(replies)
    assert lines[-1] == {
        "type": "position_moved",
        "leaf_id": ended[0]["entry_id"],
        "left_branch": False,
    }
    assert "tangents: openai/beta:" in result.stderr and "Traceback" not in result.stderr


def test_a_missing_key_is_told_before_anything_is_written(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    result = run(
        "--db", str(db), "-p", "question", "--compare", "openai/a,anthropic/b",
        env={"OPENAI_API_KEY": "sk-test-0000000000000000", "ANTHROPIC_API_KEY": ""},
    )  # fmt: skip
    assert result.returncode == 2
    assert (
        result.stderr == "tangents: anthropic/b: no API key for anthropic: set ANTHROPIC_API_KEY\n"
    )
    # checked for the session's own target (its saved endpoint may need no key),
    # so the database may be open by then: nothing is in it
    assert result.stdout == "" and (not db.exists() or sessions(db) == [])
