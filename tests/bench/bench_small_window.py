"""A long conversation with a small local model, through print mode.

Run with ``python tests/bench/bench_small_window.py [--exchanges 200]
[--window 4096] [--server llama.cpp]``. The fake provider imitates that server
with that window (llama.cpp reports ``n_ctx`` at ``/props`` and refuses a
longer prompt in its words; llama-cpp-python says its window nowhere and ends
the stream); each exchange is one run of the real ``tangents --json -c -p`` with default settings
(so the request carries the default tools). Printed:

- compactions (automatic, and after an overflow) and refused requests;
- the largest request the server saw, against its window;
- time spent compacting (from ``compaction_started`` to the compaction saved)
  against time spent answering (the rest of each run, start-up included), and
  the floor: the same run for a new session's first question, measured first.

These machines are shared and noisy: read the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from fake_local_server import KINDS, LocalServer  # noqa: E402
from fake_provider import FakeProvider  # noqa: E402

WORDS = "the garden by the sea has cats and a long wall of old stones ".split()


def question(number: int) -> str:
    """A question of 20 to 80 words, different each time."""
    length = 20 + (number * 37) % 60
    return f"question {number}: " + " ".join(
        WORDS[(number + i) % len(WORDS)] for i in range(length)
    )


def program() -> list[str]:
    found = shutil.which("tangents")
    return [found] if found else [sys.executable, "-m", "tui.cli"]


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, dict[str, int]]:
    """(seconds in all, seconds compacting, counts) of one print-mode run."""
    start = time.perf_counter()
    process = subprocess.Popen(
        program() + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    compacting = 0.0
    began: float | None = None
    counts = {"compactions": 0, "overflow": 0, "left_out": 0, "errors": 0}
    for line in process.stdout:
        event = json.loads(line)
        kind = event.get("type")
        if kind == "compaction_started":
            began = time.perf_counter()
            counts["overflow"] += event["trigger"] == "overflow"
        elif kind == "entries_saved" and any(e["kind"] == "compaction" for e in event["entries"]):
            counts["compactions"] += 1
            if began is not None:
                compacting += time.perf_counter() - began
                began = None
        elif kind == "notice" and any(
            said in event["text"] for said in ("sent as stubs", "left out of the request")
        ):
            counts["left_out"] += 1
        elif kind == "turn_ended" and event.get("error"):
            counts["errors"] += 1
    process.wait()
    if process.returncode != 0:
        counts["errors"] += 1
    return time.perf_counter() - start, compacting, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exchanges", type=int, default=200)
    parser.add_argument("--window", type=int, default=4_096)
    parser.add_argument(
        "--server",
        choices=KINDS,
        default="llama.cpp",
        help="llama-cpp-python says its window nowhere: Tangents guesses 8,192 and learns by overflows",
    )
    args = parser.parse_args(sys.argv[1:] if __name__ == "__main__" else [])
    local = LocalServer(args.server, args.window)
    with tempfile.TemporaryDirectory() as home, FakeProvider(local=local) as server:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.upper().endswith(("_API_KEY", "_TOKEN"))
        }
        env.update(TANGENTS_HOME=home, HOME=home, LITELLM_LOCAL_MODEL_COST_MAP="True")
        base = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        # The floor: the same run for a new session's first, short question.
        floor = min(run_once([*base, "--json", "-p", "hi"], env)[0] for _ in range(3))
        total = compacting = 0.0
        totals = {"compactions": 0, "overflow": 0, "left_out": 0, "errors": 0}
        for number in range(args.exchanges):
            continuing = ["-c"] if number else []
            seconds, compact_seconds, counts = run_once(
                [*base, *continuing, "--json", "-p", question(number)], env
            )
            total += seconds
            compacting += compact_seconds
            for key, value in counts.items():
                totals[key] += value
    answering = total - compacting
    print(
        f"exchanges                 {args.exchanges} with {args.server}"
        f" on a {args.window:,}-token window"
    )
    print(
        f"compactions               {totals['compactions']}"
        f" ({totals['overflow']} after an overflow); requests refused {local.refused}"
    )
    print(f"turns stubbed / errors    {totals['left_out']} / {totals['errors']}")
    print(
        f"answers cut by the window  {local.cut_replies};"
        f" cut off by another request {local.interrupted}"
    )
    print(
        f"largest request           {local.largest_prompt:,} tokens"
        f" = {local.largest_prompt / args.window:.0%} of the window"
    )
    print(
        f"time compacting           {compacting:.1f} s = {compacting / total:.1%} of the runs"
        f" ({compacting / max(1, totals['compactions']):.2f} s each)"
    )
    print(
        f"time answering            {answering:.1f} s = {answering / args.exchanges:.2f} s a run"
        f" = {answering / args.exchanges / floor:.1f}x the floor"
    )
    print(f"floor (a new session)     {floor:.2f} s a run")


if __name__ == "__main__":
    main()
