"""A conversation with a real local server, in print mode and in the app.

Start the server first (on this machine only), for example llama-cpp-python's
with a small model and a 4k window as it runs by default::

    python -m llama_cpp.server --model MODEL.gguf --n_ctx 4096 --host 127.0.0.1 --port 8765

then run::

    python tests/bench/real_local_server.py --server http://127.0.0.1:8765/v1 \\
        [--exchanges 12] [--modes print,app] [--model openai/local]

Each mode holds its own conversation of ``--exchanges`` questions of about
140 words with the real ``tangents``, default settings, a home of its own:
print mode as ``tangents --json [-c] -p QUESTION`` runs, the app in tmux (a
private socket, 80x24) with each question pasted and sent. Printed per mode:
answers whole, failed or cut short; compactions that succeeded or failed,
and those after an overflow; the seconds to the first token and to the last
(median and worst; print mode from the program's start, the app from Enter
to the reply's first checkpoint and to its saved entry in the database);
time compacting (print mode); the window learned. The floor: the same server
asked directly (httpx, streamed, a short question), measured first.

Machines are shared and a small model on a CPU is slow: read the ratios to
the floor, and what succeeded, rather than absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

WORDS = "the garden by the sea has cats and a long wall of old stones ".split()
TIMEOUT = 900.0
"""Seconds one exchange may take, compactions included, before the run gives up."""


def question(number: int) -> str:
    """About 140 words, different each time (as the tests' long conversations)."""
    return f"question {number}: " + " ".join(WORDS[(number + i) % len(WORDS)] for i in range(140))


@dataclass
class Figures:
    """What one mode's conversation did."""

    first: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    whole: int = 0
    failed: list[str] = field(default_factory=list)
    compactions: int = 0
    compactions_failed: int = 0
    overflows: int = 0
    compacting: float = 0.0
    window: str = "not learned"


def environment(home: str) -> dict[str, str]:
    """The machine's environment without keys, with a home of its own."""
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith(("_API_KEY", "_TOKEN"))}
    env.update(TANGENTS_HOME=home, HOME=home, LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.update(OPENAI_API_KEY="sk-local-0000000000000000", TERM="xterm-256color")
    return env


def program() -> list[str]:
    found = shutil.which("tangents")
    return [found] if found else [sys.executable, "-m", "tui.cli"]


def floor(server: str, model: str) -> tuple[float, float]:
    """(first token, last token) of the server asked directly, best of three."""
    best = (float("inf"), float("inf"))
    body = {"model": model.split("/", 1)[-1], "stream": True, "max_tokens": 64}
    body["messages"] = [{"role": "user", "content": "Say hello in five words."}]
    for _ in range(3):
        start, first = time.perf_counter(), None
        with httpx.stream("POST", f"{server}/chat/completions", json=body, timeout=TIMEOUT) as r:
            for line in r.iter_lines():
                if first is None and '"content":"' in line.replace(" ", ""):
                    first = time.perf_counter() - start
        last = time.perf_counter() - start
        best = min(best, (first if first is not None else last, last))
    return best


def learned_window(db: Path) -> str:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT tokens, source FROM learned_windows WHERE tokens > 0"
        ).fetchall()
    return ", ".join(f"{tokens:,} ({source})" for tokens, source in rows) or "not learned"


def print_mode(server: str, model: str, exchanges: int) -> Figures:
    figures = Figures()
    with tempfile.TemporaryDirectory() as home:
        env = environment(home)
        for number in range(exchanges):
            argv = [*program(), "--model", model, "--api-base", server, "--json"]
            argv += [*(["-c"] if number else []), "-p", question(number)]
            _one_print_run(argv, env, figures)
        figures.window = learned_window(Path(home) / "tangents.db")
    return figures


def _one_print_run(argv: list[str], env: dict[str, str], figures: Figures) -> None:
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    first = began = None
    stop = error = ""
    for line in process.stdout:
        event, now = json.loads(line), time.perf_counter()
        kind = event.get("type")
        if kind == "text" and first is None:
            first = now - start
        elif kind == "compaction_started":
            began = now
            figures.overflows += event["trigger"] == "overflow"
        elif kind == "compaction_ended":
            figures.compacting += now - (began or now)
            figures.compactions += event["entry_id"] is not None
            figures.compactions_failed += event["entry_id"] is None
        elif kind == "done":
            stop = event["stop_reason"]
        elif kind == "turn_ended" and event.get("error"):
            error = str(event["error"])
    process.wait(TIMEOUT)
    figures.last.append(time.perf_counter() - start)
    figures.first.append(first if first is not None else figures.last[-1])
    if process.returncode == 0 and stop == "stop" and not error:
        figures.whole += 1
    else:
        reason = error or (process.stderr.read().strip() if process.stderr else "")
        figures.failed.append(f"exit {process.returncode}, {stop or 'no finish'}: {reason}"[:200])


class Pane:
    """The app in a tmux server of its own (``-L``), 80x24."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.socket = f"tangents-bench-{uuid.uuid4().hex[:10]}"
        exported = " ".join(f"{k}={_quote(v)}" for k, v in env.items())
        shell = f"env {exported} {' '.join(map(_quote, command))}; sleep 600"
        self._tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "80", "-y", "24", shell
        )

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "app")

    def paste(self, text: str) -> None:
        self._tmux("set-buffer", "-b", "q", text)
        self._tmux("paste-buffer", "-p", "-d", "-b", "q", "-t", "app")

    def enter(self) -> None:
        self._tmux("send-keys", "-t", "app", "Enter")

    def close(self) -> None:
        self._tmux("kill-server")


def app_mode(server: str, model: str, exchanges: int) -> tuple[Figures, str]:
    """The figures, and the last screen."""
    figures = Figures()
    with tempfile.TemporaryDirectory() as home:
        db = Path(home) / "tangents.db"
        pane = Pane([*program(), "--model", model, "--api-base", server], environment(home))
        try:
            _wait(lambda: "enter sends" in pane.screen(), 60)
            for number in range(exchanges):
                pane.paste(question(number))
                _wait(lambda n=number: f"question {n}:" in pane.screen(), 30)
                _one_app_exchange(pane, db, figures)
            screen = pane.screen()
        finally:
            pane.close()
        figures.window = learned_window(db)
    return figures, screen


def _one_app_exchange(pane: Pane, db: Path, figures: Figures) -> None:
    before = _replies(db)
    compactions = _count(db, "SELECT count(*) FROM entries WHERE type = 'compaction'")
    start = time.perf_counter()
    pane.enter()
    first = None
    failed_compaction = False
    while _replies(db) == before:
        if first is None and _count(db, "SELECT count(*) FROM partial_replies"):
            first = time.perf_counter() - start
        failed_compaction |= "compaction failed" in pane.screen()
        if time.perf_counter() - start > TIMEOUT:
            raise SystemExit(f"no reply after {TIMEOUT:.0f} s; the pane shows:\n{pane.screen()}")
        time.sleep(0.05)
    figures.last.append(time.perf_counter() - start)
    figures.first.append(first if first is not None else figures.last[-1])
    figures.compactions += (
        _count(db, "SELECT count(*) FROM entries WHERE type = 'compaction'") - compactions
    )
    figures.compactions_failed += failed_compaction
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        stop, error = conn.execute(
            "SELECT json_extract(payload, '$.stop_reason'), json_extract(payload, '$.error')"
            " FROM entries WHERE type = 'message' AND json_extract(payload, '$.role') = 'assistant'"
            " ORDER BY rowid DESC LIMIT 1"
        ).fetchone()
    if stop == "stop" and not error:
        figures.whole += 1
    else:
        figures.failed.append(f"{stop}: {error}"[:200])


def _replies(db: Path) -> int:
    return _count(
        db,
        "SELECT count(*) FROM entries WHERE type = 'message'"
        " AND json_extract(payload, '$.role') = 'assistant'",
    )


def _count(db: Path, query: str) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute(query).fetchone()[0])
    except sqlite3.OperationalError:  # the app has not made that table yet
        return 0


def _wait(condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up after {seconds:.0f} s waiting for the app")
        time.sleep(0.1)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def report(
    mode: str, figures: Figures, exchanges: int, floor_first: float, floor_last: float
) -> None:
    def seconds(values: list[float], floor_value: float) -> str:
        median = statistics.median(values)
        return f"median {median:.1f} s ({median / floor_value:.0f}x the floor), worst {max(values):.1f} s"

    print(f"[{mode}] answers whole     {figures.whole} of {exchanges}")
    for reason in figures.failed:
        print(f"[{mode}]   not whole: {reason}")
    print(
        f"[{mode}] compactions       {figures.compactions} succeeded, {figures.compactions_failed} failed"
        + (f", {figures.overflows} after an overflow" if mode == "print" else "")
    )
    print(f"[{mode}] first token       {seconds(figures.first, floor_first)}")
    print(f"[{mode}] last token        {seconds(figures.last, floor_last)}")
    if mode == "print":
        total = sum(figures.last)
        print(
            f"[{mode}] time compacting   {figures.compacting:.0f} s of {total:.0f} s"
            f" ({figures.compacting / total:.0%}); answering {total - figures.compacting:.0f} s"
        )
    print(f"[{mode}] window learned    {figures.window}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--server", help="the server's OpenAI base URL, e.g. http://127.0.0.1:8765/v1"
    )
    parser.add_argument("--exchanges", type=int, default=12)
    parser.add_argument("--modes", default="print,app")
    parser.add_argument("--model", default="openai/local")
    args = parser.parse_args(sys.argv[1:] if __name__ == "__main__" else [])
    if not args.server:
        print("skipped: needs a running local server (--server URL)")
        return
    server = args.server.rstrip("/")
    floor_first, floor_last = floor(server, args.model)
    print(
        f"floor (the server asked directly)  first token {floor_first:.2f} s, last {floor_last:.2f} s"
    )
    modes = args.modes.split(",")
    if "print" in modes:
        report(
            "print",
            print_mode(server, args.model, args.exchanges),
            args.exchanges,
            floor_first,
            floor_last,
        )
    if "app" in modes:
        figures, screen = app_mode(server, args.model, args.exchanges)
        report("app", figures, args.exchanges, floor_first, floor_last)
        print("[app] last screen:\n" + screen.rstrip())


if __name__ == "__main__":
    main()
