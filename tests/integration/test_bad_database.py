"""A database Tangents cannot use is refused with one clear line and left untouched."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.cli import run


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_valid(tmp_path: Path) -> Path:
    db = tmp_path / "valid.db"
    result = run("--db", str(db), "-m", "demo", "-p", "hello")
    assert result.returncode == 0, result.stderr
    return db


@pytest.mark.parametrize("kind", ["not sqlite", "truncated", "newer"])
def test_bad_database_is_refused_and_untouched(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "bad.db"
    if kind == "not sqlite":
        db.write_text("these are my notes, not a database\n" * 100)
    else:
        valid = make_valid(tmp_path)
        shutil.copy(valid, db)
        if kind == "truncated":
            data = db.read_bytes()
            db.write_bytes(data[: len(data) // 3])
        else:
            conn = sqlite3.connect(db)
            conn.execute("PRAGMA user_version = 999")
            conn.close()
    before = digest(db)
    for args in (["-p", "hi", "-m", "demo"], ["sessions", "list"]):
        result = run("--db", str(db), *args)
        assert result.returncode == 2, (kind, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(db) in lines[0], result.stderr
        if kind == "newer":
            assert "newer" in lines[0]
    assert digest(db) == before
    assert left_beside(db) == []


def left_beside(db: Path) -> list[str]:
    return [p.name for p in db.parent.iterdir() if p.name in (f"{db.name}-wal", f"{db.name}-shm")]


COMMANDS = (
    ["sessions", "list"],
    ["-p", "hi", "-m", "demo"],
    ["sessions", "import", "IMPORT"],
    ["-c", "-m", "demo"],  # the app, reading the latest session: refused before it starts
)


def refused(db: Path, import_file: Path, reason: str, commands=COMMANDS) -> None:
    """Every command refuses ``db`` with one line and exit code 2, leaving it as it was."""
    before = digest(db)
    for command in commands:
        args = [str(import_file) if a == "IMPORT" else a for a in command]
        result = run("--db", str(db), *args)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert result.stderr.splitlines() == [f"tangents: {db}: {reason}"], (command, result.stderr)
        assert digest(db) == before, command
        assert left_beside(db) == [], command


@pytest.fixture
def openai_file(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "imported question"}]))
    return path


def corrupt_tables(db: Path, *tables: str) -> None:
    """Overwrite the root pages of ``tables`` (pages in the middle of the file) with garbage."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    roots = [
        conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]
        for t in tables
    ]
    conn.close()
    with open(db, "r+b") as f:
        for root in roots:
            f.seek((root - 1) * page_size)
            f.write(b"\xa5" * page_size)


def test_a_database_with_corrupted_pages_is_refused_in_one_line(tmp_path, openai_file) -> None:
    db = make_valid(tmp_path)
    corrupt_tables(db, "sessions", "entries")
    refused(db, openai_file, "database disk image is malformed")


def test_a_damaged_search_index_is_refused_as_malformed(tmp_path, openai_file) -> None:
    """Pages of the full-text index overwritten: what reads or writes it is
    refused (SQLite says "vtable constructor failed", an error of the
    corrupt kind); the sessions list, which does not read it, still works."""
    db = make_valid(tmp_path)
    corrupt_tables(db, "entries_fts_data", "entries_fts_idx", "entries_fts_config")
    refused(
        db,
        openai_file,
        "database disk image is malformed (vtable constructor failed: entries_fts)",
        [
            ["-p", "hi", "-m", "demo"],
            ["sessions", "import", "IMPORT"],
            ["sessions", "search", "hi"],
        ],
    )
    listed = run("--db", str(db), "sessions", "list")
    assert listed.returncode == 0 and "hello" in listed.stdout, listed.stderr


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A valid database file nobody may write to, root included (immutable)."""
    db = make_valid(tmp_path)
    db.chmod(0o444)
    as_root = os.geteuid() == 0
    if as_root:
        subprocess.run(["chattr", "+i", str(db)], check=True)
    try:
        yield db
    finally:
        if as_root:
            subprocess.run(["chattr", "-i", str(db)], check=True)


def test_a_read_only_database_is_refused_in_one_line(read_only: Path, openai_file) -> None:
    refused(read_only, openai_file, "is read-only")
