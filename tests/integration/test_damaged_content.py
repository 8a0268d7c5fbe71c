"""A sound database file holding damaged content, edited by hand: every command
that reads it says so in one line (exit code 2), never a traceback or a hang."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.integration.cli import run, tangents_command

READERS = (
    ("sessions", "show", "{id}"),
    ("sessions", "export", "{id}", "--format", "json"),
    ("sessions", "export", "{id}", "--format", "markdown"),
    ("--session", "{id}", "-m", "demo", "-p", "again"),
)


def make_session(tmp_path: Path) -> tuple[Path, str]:
    """A database with one demo exchange, and the session's id."""
    db = tmp_path / "t.db"
    result = run("--db", str(db), "-m", "demo", "-p", "hello")
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(db) as conn:
        [(session_id,)] = conn.execute("SELECT id FROM sessions").fetchall()
    return db, session_id


def damage(db: Path, *statements: str) -> None:
    """Edit the file as a person with the sqlite3 shell would (no triggers or keys checked)."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA foreign_keys = OFF")
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


ASSISTANT = '(SELECT id FROM entries WHERE payload LIKE \'%"role":"assistant"%\')'
USER = '(SELECT id FROM entries WHERE payload LIKE \'%"role":"user"%\')'


@pytest.mark.parametrize(
    "statement",
    [
        f"UPDATE entries SET payload = '{{not json' WHERE id = {ASSISTANT}",
        f"UPDATE entries SET payload = json_set(payload, '$.role', 5) WHERE id = {ASSISTANT}",
        f"UPDATE entries SET payload = json_set(payload, '$.usage', 'lots') WHERE id = {ASSISTANT}",
        "UPDATE entries SET payload = json_set(payload, '$.usage.output_tokens', 1e300)"
        f" WHERE id = {ASSISTANT}",
        f"UPDATE entries SET type = 'mystery' WHERE id = {ASSISTANT}",
        "UPDATE sessions SET leaf_id = 'no-such-entry'",
        f"UPDATE entries SET parent_id = 'no-such-entry' WHERE id = {USER}",
        f"UPDATE entries SET parent_id = {ASSISTANT} WHERE id = {USER}",
    ],
    ids=[
        "not-json",
        "role-5",
        "usage-text",
        "usage-huge",
        "unknown-type",
        "dangling-leaf",
        "dangling-parent",
        "cycle",
    ],
)
def test_damaged_content_is_one_line_in_every_reader(tmp_path: Path, statement: str) -> None:
    """Refused in one line by every reader; a leaf or parent that is missing
    may instead be read around (``sessions show`` summarises what is there)."""
    refused = "no-such-entry" not in statement
    db, session_id = make_session(tmp_path)
    damage(db, statement)
    for args in READERS:
        result = run("--db", str(db), *(a.format(id=session_id) for a in args), timeout=30)
        assert "Traceback" not in result.stderr, (args, result.stderr)
        if result.returncode == 0 and not refused:  # the damage does not touch this command
            continue
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert len(lines) == 1, (args, lines)
        assert str(db) in lines[0] or session_id in lines[0], (args, lines)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_fifo_as_database_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    result = subprocess.run(
        [*tangents_command(), "--db", str(fifo), "sessions", "list"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(fifo) in lines[0], result.stderr
