"""Durability: SIGKILL at random moments, and two writers on one database."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.integration.cli import run, sessions, tangents_command


def check_database(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    rows = conn.execute("SELECT id, parent_id, session_id FROM entries").fetchall()
    parent = {row[0]: row[1] for row in rows}
    session_of = {row[0]: row[2] for row in rows}
    for entry_id, parent_id, session_id in rows:
        assert parent_id is None or parent_id in parent, "orphan entry"
        assert parent_id is None or session_of[parent_id] == session_id, "parent in another session"
        seen, node = set(), entry_id
        while node is not None:
            assert node not in seen, "cycle in the tree"
            seen.add(node)
            node = parent[node]
    for (leaf,) in conn.execute("SELECT leaf_id FROM sessions WHERE leaf_id IS NOT NULL"):
        assert leaf in parent, "leaf points at a missing entry"
    return conn


def test_sigkill_at_random_moments_never_corrupts_or_loses_completed_exchanges(
    tmp_path: Path,
) -> None:
    db = tmp_path / "crash.db"
    rng = random.Random(20261122)
    completed: list[str] = []
    killed = 0
    for i in range(20):
        prompt = f"exchange number {i}"
        process = subprocess.Popen(
            tangents_command() + ["--db", str(db), "-m", "demo", "-c", "-p", prompt],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        time.sleep(rng.uniform(0.0, 2.6))
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            killed += 1
        process.wait(30)
        if process.returncode == 0:
            completed.append(prompt)
        if db.exists():
            conn = check_database(db)
            texts = [
                row[0] for row in conn.execute("SELECT payload FROM entries WHERE type = 'message'")
            ]
            conn.close()
            for done in completed:
                assert sum(done in t for t in texts) >= 1, f"completed exchange {done!r} lost"
    assert killed >= 5 and completed, (killed, completed)
    # The session still works after all that.
    result = run("--db", str(db), "-m", "demo", "-c", "-p", "still alive?")
    assert result.returncode == 0, result.stderr
    check_database(db).close()


def test_two_print_mode_processes_on_one_database(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    processes = [
        subprocess.Popen(
            tangents_command() + ["--db", str(db), "-m", "demo", "-p", f"writer {n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    for process in processes:
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert out.strip()
    listed = sessions(db)
    assert sorted(s["title"] for s in listed) == ["writer 0", "writer 1"]
    assert all(s["message_count"] == 2 for s in listed)
    check_database(db).close()
