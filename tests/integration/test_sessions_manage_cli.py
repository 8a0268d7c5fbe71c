"""``tangents sessions rename|archive|unarchive|delete``: the real program on a real file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.integration.cli import run, sessions, tangents_command


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def new_session(db: Path, text: str) -> str:
    chat = json.dumps([{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}])
    result = run("--db", str(db), "sessions", "import", "-", "--json", input=chat)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["id"]


def listed(db: Path, *flags: str) -> list[dict]:
    result = run("--db", str(db), "sessions", "list", "--json", *flags)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_rename_archive_and_unarchive(db: Path) -> None:
    session_id = new_session(db, "first question")
    renamed = run("--db", str(db), "sessions", "rename", session_id, "  Planting   oaks ")
    assert renamed.returncode == 0, renamed.stderr
    assert renamed.stdout == f"Renamed session {session_id} to: Planting oaks\n"
    assert [s["title"] for s in sessions(db)] == ["Planting oaks"]
    hits = json.loads(run("--db", str(db), "sessions", "search", "first", "--json").stdout)
    assert [h["session_id"] for h in hits] == [session_id]

    archived = run("--db", str(db), "sessions", "archive", session_id)
    assert (
        archived.returncode == 0
        and archived.stdout == f"Archived session {session_id}: Planting oaks\n"
    )
    assert listed(db) == [] and [s["archived"] for s in listed(db, "--all")] == [True]
    assert run("--db", str(db), "sessions", "unarchive", session_id).returncode == 0
    assert [s["archived"] for s in listed(db)] == [False]


def test_unknown_ids_and_empty_titles_are_usage_errors(db: Path) -> None:
    session_id = new_session(db, "hello")
    for argv in (
        ("rename", "nope", "x"),
        ("archive", "nope"),
        ("unarchive", "nope"),
        ("delete", "nope", "--yes"),
    ):
        result = run("--db", str(db), "sessions", *argv)
        assert result.returncode == 2 and "no session with id 'nope'" in result.stderr, argv
    empty = run("--db", str(db), "sessions", "rename", session_id, "   ")
    assert empty.returncode == 2 and "a title cannot be empty" in empty.stderr


def test_delete_without_a_terminal_needs_yes(db: Path) -> None:
    doomed, kept = new_session(db, "doomed"), new_session(db, "kept")
    refused = run("--db", str(db), "sessions", "delete", doomed, input="y\n")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert len(sessions(db)) == 2
    deleted = run("--db", str(db), "sessions", "delete", doomed, "--yes")
    assert deleted.returncode == 0 and deleted.stdout == f"Deleted session {doomed}: doomed\n"
    assert [s["id"] for s in sessions(db)] == [kept]
    assert json.loads(run("--db", str(db), "sessions", "search", "doomed", "--json").stdout) == []


@pytest.mark.parametrize(("answer", "kept"), [("n\n", True), ("y\n", False)])
def test_delete_on_a_terminal_asks(db: Path, answer: str, kept: bool) -> None:
    session_id = new_session(db, "maybe")
    parent, child = os.openpty()
    try:
        process = subprocess.Popen(
            tangents_command() + ["--db", str(db), "sessions", "delete", session_id],
            stdin=child,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.write(parent, answer.encode())
        out, err = process.communicate(timeout=60)
    finally:
        os.close(parent)
        os.close(child)
    assert f"Delete session {session_id} (maybe, 2 messages)? [y/N]" in out
    assert (len(sessions(db)) == 1) is kept
    assert process.returncode == (1 if kept else 0), err
