"""Durability: SIGKILL at random moments (while a reply streams, while a tool
and an MCP server run, while a session is compacted), and several writers on
one database, with the app open on it too.

Quick by default; ``TANGENTS_LONG_TESTS=1`` runs the long setting (at least
100 SIGKILLs in the first test, more writers, more kills during tools).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_provider import Reply, ToolCall

from tests.integration.cli import anthropic_env, run, sessions, tangents_command
from tests.long_suite import LONG
from tests.tools.procs import kill_quietly, still_alive

pytestmark = pytest.mark.slow

KILLS = 100 if LONG else 6
"""SIGKILLs while replies stream."""
TOOL_KILLS = 30 if LONG else 3
"""SIGKILLs while a command and an MCP server run."""
COMPACT_KILLS = 20 if LONG else 3
"""SIGKILLs while a session is compacted."""
WRITERS = 16 if LONG else 2
"""Print-mode processes writing to one database at once."""
HOSTILE = str(Path(__file__).parents[1] / "tools" / "hostile_server.py")


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


def killed_at_random(args: list[str], rng: random.Random, upto: float) -> tuple[int, str]:
    """Run ``tangents ARGS`` in its own session and SIGKILL it after a random
    time up to ``upto`` seconds unless it has ended: (exit code, stderr)."""
    process = subprocess.Popen(
        tangents_command() + args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    time.sleep(rng.uniform(0.0, upto))
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    _, err = process.communicate(timeout=30)
    return process.returncode, err.decode(errors="replace")


def lifetime(*args: str) -> float:
    """Seconds ``tangents ARGS`` takes from start to exit, on this machine as
    loaded as it is now (a window to kill in that fits the machine: with a fixed
    one, a loaded machine got every process killed and none through)."""
    started = time.monotonic()
    result = run(*args)
    assert result.returncode == 0, result.stderr
    return time.monotonic() - started


def test_sigkill_at_random_moments_never_corrupts_or_loses_completed_exchanges(
    tmp_path: Path,
) -> None:
    db = tmp_path / "crash.db"
    rng = random.Random(20261122)
    # Killed within 1.5 times as long as one whole exchange takes (on another
    # database): about two kills for one exchange completed.
    window = 1.5 * lifetime("--db", str(tmp_path / "timing.db"), "-m", "demo", "-p", "how long?")
    completed: list[str] = []
    killed = 0
    i = 0
    while killed < KILLS or not completed:
        assert i < 4 * KILLS + 20, (killed, len(completed))
        i += 1
        prompt = f"exchange number {i}"
        args = ["--db", str(db), "-m", "demo", "-c", "-p", prompt]
        code, _ = killed_at_random(args, rng, window)
        killed += code == -signal.SIGKILL
        if code == 0:
            completed.append(prompt)
        if db.exists():
            conn = check_database(db)
            texts = [
                row[0] for row in conn.execute("SELECT payload FROM entries WHERE type = 'message'")
            ]
            conn.close()
            for done in completed:
                assert sum(done in t for t in texts) >= 1, f"completed exchange {done!r} lost"
    assert killed >= KILLS and completed, (killed, completed)
    # The session still works after all that.
    result = run("--db", str(db), "-m", "demo", "-c", "-p", "still alive?")
    assert result.returncode == 0, result.stderr
    check_database(db).close()


def start_writers(db: Path) -> list[subprocess.Popen[str]]:
    """:data:`WRITERS` print-mode processes at once, each saving a session on ``db``."""
    return [
        subprocess.Popen(
            tangents_command() + ["--db", str(db), "-m", "demo", "-p", f"writer {n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WRITERS)
    ]


def writers_done(writers: list[subprocess.Popen[str]]) -> None:
    for writer in writers:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert out.strip()


def test_print_mode_processes_on_one_database(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    writers_done(start_writers(db))
    listed = sessions(db)
    assert sorted(s["title"] for s in listed) == sorted(f"writer {n}" for n in range(WRITERS))
    assert all(s["message_count"] == 2 for s in listed)
    check_database(db).close()


def test_sigkill_while_compacting_leaves_the_session_whole(tmp_path: Path) -> None:
    """``sessions compact`` killed at random moments: each compaction is there
    whole or not at all, no message is lost, and the session goes on."""
    db = tmp_path / "compact.db"
    rng = random.Random(20261125)
    killed = compacted = 0
    for i in range(4 * COMPACT_KILLS + 10):
        if killed >= COMPACT_KILLS and compacted:
            break
        took = [  # something new to compact
            lifetime("--db", str(db), "-m", "demo", "-c", "-p", f"question number {n}")
            for n in (2 * i, 2 * i + 1)
        ]
        [session] = sessions(db)
        compact = ["--db", str(db), "sessions", "compact", session["id"], "-m", "demo"]
        # Killed within as long as a question took just now (a process, a request
        # and a write each, like a compaction): some kills come after it is done.
        code, err = killed_at_random(compact, rng, min(took))
        killed += code == -signal.SIGKILL
        compacted += code == 0
        assert code in (0, -signal.SIGKILL) or "nothing to compact" in err, err
        conn = check_database(db)
        rows = conn.execute("SELECT type, payload FROM entries").fetchall()
        conn.close()
        summaries = [json.loads(p)["summary"] for t, p in rows if t == "compaction"]
        assert len(summaries) >= compacted and all(summaries), "a compaction is whole"
        texts = " ".join(p for t, p in rows if t == "message")
        assert all(f"question number {n}" in texts for n in range(2 * i + 2)), "message lost"
    assert killed >= COMPACT_KILLS and compacted, (killed, compacted)
    result = run("--db", str(db), "-m", "demo", "-c", "-p", "still alive?")
    assert result.returncode == 0, result.stderr


def test_writers_beside_the_app_on_one_database(tmp_path: Path) -> None:
    """The app open on a database while print-mode processes write to it: the
    app's message is saved, every writer's session is there."""
    from tests.e2e.test_pty import Pty

    db = tmp_path / "shared.db"
    env = {**os.environ, "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    app = Pty(tangents_command() + ["--db", str(db), "-m", "demo"], env)
    try:
        app.read_until(b"Message (enter sends")
        writers = start_writers(db)
        app.write(b"from the app")
        app.read_until(b"from the app")
        app.write(b"\r")
        app.read_until(b"Demo reply 1", timeout=120)
        writers_done(writers)
        app.write(b"\x11")  # ctrl+q
        assert app.wait(30) == 0, bytes(app.output[-2000:])
    finally:
        app.close()
    titles = sorted(s["title"] for s in sessions(db))
    assert titles == sorted(["from the app", *(f"writer {n}" for n in range(WRITERS))])
    check_database(db).close()


def test_sigkill_while_a_tool_and_a_server_run(fake_provider, tmp_path: Path, monkeypatch) -> None:
    """Killed while a command (with a child that left its group) and an MCP
    server (with a daemonized grandchild) run: the database is intact and no
    process of theirs survives."""
    work = tmp_path / "work"
    work.mkdir()
    db = tmp_path / "tools.db"
    config = tmp_path / "config.toml"
    config.write_text(
        '[tools]\nmcp_ready_wait = 60\n[[mcp_servers]]\nname = "srv"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([HOSTILE, 'serve', str(work / 'server.pids')])}\n"
    )
    command = (
        "echo $$ >> cmd.pids; setsid sh -c 'echo $$ >> cmd.pids; exec sleep 996' & exec sleep 997"
    )
    args = ["--db", str(db), "--config", str(config), "-m", "anthropic/claude-test", "-c"]
    args += ["--allow-tools", "run_command", "-p", "run it"]
    rng = random.Random(20261123)
    env = {**os.environ, **anthropic_env(fake_provider.base_url)}
    pids: list[int] = []
    try:
        for _ in range(TOOL_KILLS):
            for name in ("cmd.pids", "server.pids"):
                (work / name).unlink(missing_ok=True)
            if not fake_provider.pending:  # the answer after the tool is the fake's default
                fake_provider.script(
                    Reply(tool_calls=[ToolCall("run_command", {"command": command})])
                )
            with (tmp_path / "stderr").open("wb") as stderr:
                process = subprocess.Popen(
                    tangents_command() + args,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    cwd=work,
                    env=env,
                    start_new_session=True,
                )
            deadline = time.monotonic() + 60
            while not (work / "cmd.pids").exists() and time.monotonic() < deadline:
                assert process.poll() is None, (tmp_path / "stderr").read_text()[-2000:]
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(process.pid, signal.SIGKILL)
            process.wait(30)
            for name in ("cmd.pids", "server.pids"):
                if (work / name).exists():
                    pids += [int(p) for p in (work / name).read_text().split()]
            assert len(pids) >= 2, "the command ran"
            assert still_alive(pids, 10) == [], (pids, (tmp_path / "stderr").read_text()[-2000:])
            check_database(db).close()
    finally:
        kill_quietly(pids)
