"""``tangents sessions note`` and ``sessions status`` (issue 35): the real
program, a real database file, the fake provider on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from fake_provider import Reply

from tests.integration.cli import anthropic_env, export, run, sessions

CLAUDE = "anthropic/claude-test"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def ask(db: Path, env: dict[str, str], *args: str):
    return run("--db", str(db), "-m", CLAUDE, *args, env=env)


def two_exchanges(db: Path, env: dict[str, str]) -> str:
    assert ask(db, env, "-p", "first").returncode == 0
    assert ask(db, env, "-c", "-p", "second").returncode == 0
    return sessions(db)[0]["id"]


def texts(message: dict) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content]


def test_a_note_goes_with_exactly_depth_messages_after_it(fake_provider, db: Path) -> None:
    env = anthropic_env(fake_provider.base_url)
    session_id = two_exchanges(db, env)
    pinned = run(
        "--db", str(db), "sessions", "note", session_id[:10], "Answer in French", "--depth", "2"
    )
    assert pinned.returncode == 0, pinned.stderr
    assert "Answer in French" in pinned.stdout and pinned.stdout.count("\n") == 1

    fake_provider.script(Reply(text="Bien."))
    assert ask(db, env, "--session", session_id, "-p", "third").returncode == 0
    wire = fake_provider.last_request.body["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "assistant", "user"]
    holding = [i for i, m in enumerate(wire) if "[Note: Answer in French]" in texts(m)]
    assert holding == [2] and len(wire) - 1 - holding[0] == 2
    assert texts(wire[2]) == ["second", "[Note: Answer in French]"]

    doc = export(db, session_id)
    by_id = {e["id"]: e for e in doc["entries"]}
    branch, cursor = [], doc["session"]["leaf_id"]
    while cursor:
        branch.append(by_id[cursor])
        cursor = by_id[cursor]["parent_id"]
    notes = [e for e in branch if e["type"] == "note"]
    assert [n["payload"] for n in notes] == [{"text": "Answer in French", "depth": 2}]

    off = run("--db", str(db), "sessions", "note", session_id, "--off")
    assert off.returncode == 0, off.stderr
    assert ask(db, env, "-c", "-p", "fourth").returncode == 0
    assert not any(
        "Note:" in t for m in fake_provider.last_request.body["messages"] for t in texts(m)
    )


@pytest.mark.parametrize(
    ("argv", "reason"),
    [
        (("note", "ID"), "give the note's TEXT, or --off"),
        (("note", "ID", "x", "--off"), "give the note's TEXT, or --off"),
        (("note", "ID", "   "), "a note cannot be empty"),
        (("note", "ID", "x", "--depth", "-1"), "depth must be between 0"),
        (("note", "nope", "x"), "no session with id 'nope'"),
        (("status", "nope", "paused"), "no session with id 'nope'"),
    ],
)
def test_bad_notes_are_one_line_refusals(db: Path, argv, reason) -> None:
    chat = json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}])
    imported = run("--db", str(db), "sessions", "import", "-", "--json", input=chat)
    session_id = json.loads(imported.stdout)["id"]
    before = export(db, session_id)
    argv = tuple(session_id if a == "ID" else a for a in argv)
    result = run("--db", str(db), "sessions", *argv)
    assert result.returncode == 2 and reason in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert export(db, session_id) == before


def digest(db: Path) -> str:
    """The database's content, for "nothing was written" (the WAL checkpointed first)."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rows = [
            conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
            for table in ("sessions", "entries", "labels", "drafts")
        ]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def test_a_completed_session_refuses_print_mode_until_active_again(fake_provider, db: Path) -> None:
    env = anthropic_env(fake_provider.base_url)
    session_id = two_exchanges(db, env)
    done = run("--db", str(db), "sessions", "status", session_id, "completed")
    assert done.returncode == 0, done.stderr
    assert f"Session {session_id} is completed (was active)" in done.stdout
    listed = run("--db", str(db), "sessions", "list")
    assert "[completed] first" in listed.stdout
    assert [s["status"] for s in sessions(db)] == ["completed"]

    before, asked = digest(db), len(fake_provider.requests)
    for argv in (("--session", session_id, "-p", "more"), ("-c", "-p", "more")):
        refused = ask(db, env, *argv)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.count("\n") == 1 and "is completed" in refused.stderr
        assert f"tangents sessions status {session_id} active" in refused.stderr
        assert refused.stdout == ""
    assert digest(db) == before and len(fake_provider.requests) == asked

    assert run("--db", str(db), "sessions", "status", session_id, "active").returncode == 0
    fake_provider.script(Reply(text="Back again."))
    again = ask(db, env, "--session", session_id, "-p", "more")
    assert again.returncode == 0 and again.stdout == "Back again.\n"
    assert sessions(db)[0]["message_count"] == 6


def test_status_stays_separate_from_archive(fake_provider, db: Path) -> None:
    session_id = two_exchanges(db, anthropic_env(fake_provider.base_url))
    assert run("--db", str(db), "sessions", "status", session_id, "paused").returncode == 0
    assert run("--db", str(db), "sessions", "archive", session_id).returncode == 0
    [row] = json.loads(run("--db", str(db), "sessions", "list", "--json", "--all").stdout)
    assert (row["status"], row["archived"]) == ("paused", True)
    unknown = run("--db", str(db), "sessions", "status", session_id, "done")
    assert unknown.returncode == 2 and "invalid choice: 'done'" in unknown.stderr
