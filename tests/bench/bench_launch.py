"""Launch time: from starting the program in a real terminal (tmux) to its first
frame with the input ready, for ``tangents`` against a minimal Textual app
showing one label, measured the same way: ``python tests/bench/bench_launch.py``.

Each figure is the median of RUNS launches; the ratio is what matters (goal:
under 1.5x the minimal app). The chat view fills in just after the first
frame, so for a long session the time until its last message shows is given
too.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

RUNS = 5
READY = "Message (enter sends"
"""The input's placeholder: on screen once the input is there and focused."""
LAST_MESSAGE = "print(499)"
"""The end of the seeded session's last message."""
FLOOR_MARKER = "MINIMAL-APP-READY"
FLOOR_APP = f"""
from textual.app import App
from textual.widgets import Label

class Minimal(App):
    def compose(self):
        yield Label("{FLOOR_MARKER}")

Minimal().run()
"""


def tangents_program() -> str:
    return shutil.which("tangents") or str(Path(sys.executable).parent / "tangents")


def time_to_marker(
    command: list[str], marker: str, env: dict[str, str], timeout: float = 60.0
) -> float:
    """Seconds from asking tmux to start ``command`` until ``marker`` is on screen."""
    socket = f"tangents-bench-{uuid.uuid4().hex[:10]}"
    tmux = ["tmux", "-L", socket]
    quoted = " ".join("'" + part.replace("'", "'\\''") + "'" for part in command)
    try:
        start = time.perf_counter()
        new_session = [
            *tmux,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "120",
            "-y",
            "40",
            quoted,
        ]
        subprocess.run(new_session, env=env, check=True)
        while time.perf_counter() - start < timeout:
            capture = [*tmux, "capture-pane", "-p", "-t", "b"]
            screen = subprocess.run(capture, capture_output=True, text=True, check=False).stdout
            if marker in screen:
                return time.perf_counter() - start
            time.sleep(0.005)
        raise RuntimeError(f"{marker!r} never appeared for {command}")
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)
        socket_dir = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
        (socket_dir / socket).unlink(missing_ok=True)  # tmux leaves it behind


def seed_session(db: Path, messages: int) -> None:
    """A session of ``messages`` alternating user/assistant messages."""
    from core.sessions.content import TextContent
    from core.sessions.messages import Message, user_text
    from core.sessions.session import Session
    from storage.store import SqliteStore

    async def run() -> None:
        store = await SqliteStore.open(db)
        try:
            session = await Session.create(store)
            payloads = []
            for i in range(messages // 2):
                payloads.append(user_text(f"Question {i}: how does part {i} work?"))
                payloads.append(
                    Message(
                        role="assistant",
                        content=(
                            TextContent(
                                f"Part {i} works like this:\n\n- one\n- two\n\n```python\nprint({i})\n```"
                            ),
                        ),
                        model="demo",
                        stop_reason="stop",
                    )
                )
            await session.append_many(payloads)
        finally:
            await store.close()

    asyncio.run(run())


def medians(cases: dict[str, tuple[list[str], str]], env: dict[str, str]) -> dict[str, float]:
    """Median time of each case; runs are interleaved so that the machine's
    changing load falls on every case alike."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(RUNS):
        for name, (command, marker) in cases.items():
            times[name].append(time_to_marker(command, marker, env))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    if shutil.which("tmux") is None:
        print("launch: skipped (tmux is not installed)")
        return
    with tempfile.TemporaryDirectory(prefix="tangents-bench-") as home:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.upper().endswith(("_API_KEY", "_API_BASE", "_BASE_URL"))
        }
        env.update(TANGENTS_HOME=home, TERM="xterm-256color", LITELLM_LOCAL_MODEL_COST_MAP="True")
        floor_script = Path(home) / "minimal_app.py"
        floor_script.write_text(FLOOR_APP)
        floor_command = [sys.executable, str(floor_script)]
        app = tangents_program()
        long_db = Path(home) / "long.db"
        seed_session(long_db, 1000)

        cases = {
            "minimal Textual app (floor)": (floor_command, FLOOR_MARKER),
            "tangents (new session)": ([app], READY),
            "tangents -c (1,000 messages)": ([app, "--db", str(long_db), "-c"], READY),
            "  ... until its last message shows": ([app, "--db", str(long_db), "-c"], LAST_MESSAGE),
        }
        for command, marker in cases.values():
            time_to_marker(command, marker, env)  # warm the file cache
        results = medians(cases, env)
    floor = results.pop("minimal Textual app (floor)")
    print(f"launch to first frame, median of {RUNS} runs in tmux 120x40")
    print(f"  {'minimal Textual app (floor)':<32} {floor * 1000:7.0f} ms")
    for name, seconds in results.items():
        goal = "" if name.startswith(" ") else " (goal < 1.5x)"
        print(f"  {name:<32} {seconds * 1000:7.0f} ms   {seconds / floor:4.2f}x the floor{goal}")


if __name__ == "__main__":
    main()
