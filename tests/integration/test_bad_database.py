"""A database Tangents cannot use is refused with one clear line and left untouched."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
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
            with sqlite3.connect(db) as conn:
                conn.execute("PRAGMA user_version = 999")
    before = digest(db)
    for args in (["-p", "hi", "-m", "demo"], ["sessions", "list"]):
        result = run("--db", str(db), *args)
        assert result.returncode == 2, (kind, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(db) in lines[0], result.stderr
        if kind == "newer":
            assert "newer" in lines[0]
    assert digest(db) == before
    assert not Path(str(db) + "-wal").exists() or kind != "not sqlite"
