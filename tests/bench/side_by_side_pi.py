"""Tangents beside pi (the pi coding agent, a Node TUI), the issue's table in one
run: ``python tests/bench/side_by_side_pi.py [--pi PATH] [--runs N]``.

Both programs run in tmux 120x40 against the same fake OpenAI-compatible
server (tests/fake_provider.py), alternating, measured from outside the same
way (reply_driver.py). Not part of run_all.py or CI: it needs pi, which is
installed from npm (node 20)::

    npm install --prefix /tmp/pi @mariozechner/pi-coding-agent@0.73.1
    python tests/bench/side_by_side_pi.py --pi /tmp/pi/node_modules/.bin/pi
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import reply_driver as driver  # noqa: E402
from bench_replies import CHUNK_CHARS, EXCHANGES, WORDS, measure  # noqa: E402

PI_READY = "Pi can explain its own features"


def pi_program(path: str, home: Path, api_base: str) -> driver.Program:
    """pi with the fake server as a custom provider (~/.pi/agent/models.json)."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    provider = {"baseUrl": api_base, "api": "openai-completions", "apiKey": "sk-bench-0000"}
    models = {"providers": {"fake": {**provider, "models": [{"id": "fake"}]}}}
    (agent / "models.json").write_text(json.dumps(models))
    return driver.Program(
        "pi", lambda _: [path, "--provider", "fake", "--model", "fake", "--offline"], PI_READY
    )


ROWS = (
    # (figure, key, unit, goal)
    ("first short reply after launch (Enter → reply)", "first", "s", "≤ 2x pi"),
    ("slowest key echo while the first reply is awaited", "first_echo_max", "s", "one frame"),
    (f"{WORDS:,}-word reply: Enter → first word", "first_word", "s", "≤ 100 ms after 1st chunk"),
    (f"{WORDS:,}-word reply: Enter → last word", "last_word", "s", "≤ 1.5x pi"),
    ("frames seen from first word to last", "stream_frames", "frames", "≥ pi"),
    ("frames a second during that stream", "stream_fps", "/s", "≥ 10, ≥ pi"),
    ("keystroke echo during that stream (p95)", "echo_p95", "s", "< 50 ms"),
    ("keystroke echo during that stream (median)", "echo_median", "s", ""),
    ("short exchange, 2nd–6th (Enter → reply)", "exchange_first5", "s", "≤ 3x pi"),
    ("short exchange, 46th–50th", "exchange_last5", "s", "flat"),
    (f"CPU for {EXCHANGES} exchanges", "cpu_total", "s", "≤ 3x pi"),
    ("RSS after the first reply", "rss_mb", "MB", "≤ 1.5x pi"),
)


def fmt(value: float, unit: str) -> str:
    if unit == "MB":
        return f"{value:.0f} MB"
    if unit in ("frames", "/s"):
        return f"{value:.0f}" if unit == "frames" else f"{value:.1f}/s"
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.0f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pi", default=shutil.which("pi"), help="the pi program")
    parser.add_argument("--runs", type=int, default=1, help="alternating runs of each")
    args = parser.parse_args(argv)
    if not args.pi:
        sys.exit("pi not found: install it (see this script's docstring) and pass --pi PATH")
    results: dict[str, list[dict]] = {"tangents": [], "pi": []}
    with driver.workspace() as (home, server):
        pi = pi_program(args.pi, home, server.api_base)
        _, raw = server.raw_stream_seconds(driver.long_reply_text(WORDS), CHUNK_CHARS)
        for run in range(args.runs):
            for program in (driver.tangents(), pi):
                print(f"run {run + 1}: {program.name}...", file=sys.stderr, flush=True)
                results[program.name].append(measure(program, server, home))
    print(f"\nTangents beside pi, tmux 120x40, median of {args.runs} run(s)")
    print(f"(a plain HTTP client reads the {WORDS:,}-word stream in {fmt(raw, 's')})\n")
    print("| figure | Tangents | pi | ratio | goal |")
    print("|---|---|---|---|---|")
    for label, key, unit, goal in ROWS:
        ours = statistics.median(r[key] for r in results["tangents"])
        theirs = statistics.median(r[key] for r in results["pi"])
        ratio = f"{ours / theirs:.2f}x" if theirs else "–"
        print(f"| {label} | {fmt(ours, unit)} | {fmt(theirs, unit)} | {ratio} | {goal} |")


if __name__ == "__main__":
    main()
