"""Compare benchmarks: a fan-out to three models, and opening the compare screen.

Run with ``python tests/bench/bench_compare.py [--rounds N]``. Each case runs in a fresh
process, against the fake provider in a process of its own (so its work is
not on the measured event loop), streaming at full speed through the real
anthropic client:

- ``fanout``: three models x 5,000 tokens at once (``Conversation.compare``),
  into the live compare screen (with a text input under the columns); a key every 50 ms, timed
  until the input shows it. Its floor: the slowest of the three streams run
  alone (no screen), measured in the same run.
- ``open``: the compare screen on two 5,000-token replies, from the key to
  its first frame; floor: a screen with one empty ``Static``, the same way.

These machines are shared and noisy: read the ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZE = (120, 40)
TOKENS = 5_000
MODELS = ["anthropic/claude-a", "anthropic/claude-b", "anthropic/claude-c"]


def reply_text(seed: int) -> str:
    """About ``TOKENS`` tokens (4 characters each) of prose in paragraphs."""
    import random

    words = "the model answer is a of to and code python value list returns when".split()
    rng = random.Random(seed)
    out, size = [], 0
    while size < TOKENS * 4:
        paragraph = " ".join(rng.choice(words) for _ in range(60))
        out.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(out)


class FakeServer:
    """tests/fake_provider.py as a process, its port read from a file."""

    def __enter__(self) -> FakeServer:
        self.dir = tempfile.TemporaryDirectory()
        port_file = Path(self.dir.name) / "port"
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "tests" / "fake_provider.py"),
                "--port-file",
                str(port_file),
            ]
        )
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if time.monotonic() > deadline:
                raise SystemExit("the fake provider did not start")
            time.sleep(0.02)
        self.base_url = f"http://127.0.0.1:{port_file.read_text()}"
        return self

    def script(self, items: list[dict]) -> None:
        import urllib.request

        request = urllib.request.Request(
            f"{self.base_url}/_fake/script",
            data=json.dumps(items).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(request).read()

    def __exit__(self, *exc: object) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.dir.cleanup()


async def asked(db: Path):  # type: ignore[no-untyped-def]
    from core.sessions.messages import user_text
    from core.sessions.session import Session
    from storage import SqliteStore

    store = await SqliteStore.open(db)
    session = await Session.create(store)
    await session.append(user_text("Write a long answer."))
    return store, session


def script_replies(server: FakeServer, models: list[str]) -> None:
    server.script(
        [
            {
                "for_model": m.split("/", 1)[1],
                "type": "reply",
                "text": reply_text(i),
                "chunk_size": 4,
            }
            for i, m in enumerate(models)
        ]
    )


async def case_single(base_url: str, model: str, db: Path) -> dict[str, float]:
    """One stream alone, no screen: the floor of the fan-out."""
    from core.chat.target import target_for
    from core.chat.turn import run_turn
    from core.settings import Settings

    store, session = await asked(db)
    try:
        started = time.perf_counter()
        target = target_for(model, Settings(), base_url)
        await run_turn(session, Settings(), model=model, target=target)
        return {"seconds": time.perf_counter() - started}
    finally:
        await store.close()


async def case_fanout(base_url: str, db: Path) -> dict[str, object]:
    from textual import events
    from textual.app import App, ComposeResult
    from textual.widgets import Input

    from core.chat.conversation import Conversation
    from core.settings import Settings
    from tui.screens.compare import CompareScreen

    class TimedInput(Input):
        def __init__(self) -> None:
            super().__init__(id="bench-input")
            self.changes: list[float] = []

        def watch_value(self, value: str) -> None:
            self.changes.append(time.perf_counter())

    class BenchScreen(CompareScreen):
        CSS_PATH = str(ROOT / "tui" / "screens" / "compare.tcss")  # relative to this file otherwise

        def compose(self) -> ComposeResult:
            yield from super().compose()
            yield TimedInput()

    store, session = await asked(db)
    latencies: list[float] = []
    chars: list[int] = []
    try:
        app = App()
        async with app.run_test(size=SIZE) as pilot:
            screen = BenchScreen(titles=MODELS, on_stop=lambda: None)
            await app.push_screen(screen)
            await pilot.pause()
            box = screen.query_one(TimedInput)
            box.focus()
            await pilot.pause()
            streaming = True

            async def type_keys() -> None:
                while streaming:
                    before = len(box.changes)
                    sent = time.perf_counter()
                    app.post_message(events.Key("x", "x"))
                    while len(box.changes) == before and streaming:
                        await asyncio.sleep(0.001)
                    if len(box.changes) > before:
                        latencies.append(box.changes[-1] - sent)
                    await asyncio.sleep(0.05)

            typist = asyncio.create_task(type_keys())
            started = time.perf_counter()
            conversation = Conversation(
                session,
                Settings(),
                default_model=MODELS[0],
                default_thinking="off",
                api_base=base_url,
            )
            conversation.subscribe(screen.feed)
            result = await conversation.compare(MODELS)
            seconds = time.perf_counter() - started
            streaming = False
            await typist
            await app.workers.wait_for_complete()
            await pilot.pause()
            chars = [len(c.text) for c in screen.columns]
            errors = [c.error for c in result.columns if c.error]
            if errors:
                raise SystemExit(f"fan-out failed: {errors}")
    finally:
        await store.close()
    return {
        "seconds": seconds,
        "chars": chars,
        "key_latency_ms": sorted(1000 * x for x in latencies),
    }


async def case_open(empty: bool) -> dict[str, float]:
    """Key to first frame of the compare screen on two 5,000-token replies (or an empty screen)."""
    from textual.app import App
    from textual.screen import Screen
    from textual.widgets import Static

    from core.branching.comparison import of_alternatives
    from core.branching.tree import SessionTree
    from core.sessions.content import TextContent
    from core.sessions.entries import Entry
    from core.sessions.messages import Message, Usage
    from tui.screens.compare import CompareScreen

    def entry(i: int, parent: str | None, role: str, text: str) -> Entry:
        message = Message(
            role=role,  # type: ignore[arg-type]
            content=(TextContent(text),),
            model="bench/model" if role == "assistant" else None,
            usage=Usage(output_tokens=TOKENS) if role == "assistant" else None,
        )
        stamp = f"2026-01-01T00:00:0{i}.000Z"
        return Entry(f"e{i}", parent, "s", "message", stamp, message)

    tree = SessionTree.from_entries(
        [
            entry(0, None, "user", "Write a long answer."),
            entry(1, "e0", "assistant", reply_text(1)),
            entry(2, "e0", "assistant", reply_text(2)),
        ],
        leaf_id="e1",
    )

    class Empty(Screen[None]):
        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("")

    app = App()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        frames: list[float] = []
        started = time.perf_counter()
        screen = Empty() if empty else CompareScreen(of_alternatives(tree, "e1", "e1"))
        original = screen._compositor_refresh

        def recording() -> None:
            original()
            frames.append(time.perf_counter())

        screen._compositor_refresh = recording  # type: ignore[method-assign]
        await app.push_screen(screen)
        while not frames:
            await asyncio.sleep(0.001)
        return {"first_frame_ms": 1000 * (frames[0] - started)}


def child(case: str, arg: str) -> None:
    if case == "open":
        result = asyncio.run(case_open(empty=arg == "empty"))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench-0000000000"
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            base_url, _, model = arg.partition("|")
            db = Path(tmp) / "bench.db"
            if case == "single":
                result = asyncio.run(case_single(base_url, model, db))
            else:
                result = asyncio.run(case_fanout(base_url, db))
    print(json.dumps(result))


def run_case(case: str, arg: str = "") -> dict:
    completed = subprocess.run(
        [sys.executable, __file__, "--case", case, "--arg", arg],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=600,
    )
    if completed.returncode != 0:
        raise SystemExit(f"{case} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    """``argv``: this script's own arguments (none when run_all.py runs it)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", choices=["single", "fanout", "open"])
    parser.add_argument("--arg", default="")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of each comparison (medians are printed)"
    )
    args = parser.parse_args(argv or [])
    if args.case:
        child(args.case, args.arg)
        return

    print(
        f"compare benchmarks, headless {SIZE[0]}x{SIZE[1]}, load average {os.getloadavg()[0]:.2f}"
    )
    ratios: list[float] = []
    latencies: list[float] = []
    with FakeServer() as server:
        for round_ in range(1, args.rounds + 1):
            singles = []
            for model in MODELS:
                script_replies(server, [model])
                singles.append(run_case("single", f"{server.base_url}|{model}")["seconds"])
            script_replies(server, MODELS)
            fanout = run_case("fanout", server.base_url)
            ratios.append(fanout["seconds"] / max(singles))
            latencies += fanout["key_latency_ms"]
            print(
                f"  round {round_}: fan-out {fanout['seconds']:.2f} s, singles "
                f"{', '.join(f'{s:.2f}' for s in singles)} s, ratio {ratios[-1]:.2f}x "
                f"({fanout['chars']} characters shown)"
            )
    print(
        f"fanout_3x{TOKENS}_vs_slowest_single: median ratio {statistics.median(ratios):.2f}x, "
        f"best {min(ratios):.2f}x over {len(ratios)} rounds (goal <= 1.5x)"
    )
    latencies.sort()
    if latencies:
        print(
            f"fanout_key_latency: median {statistics.median(latencies):.0f} ms, "
            f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:.0f} ms (goal < 50 ms), "
            f"max {latencies[-1]:.0f} ms over {len(latencies)} keys"
        )
    floors, opened = [], []
    for _ in range(args.rounds):
        floors.append(run_case("open", "empty")["first_frame_ms"])
        opened.append(run_case("open", "two")["first_frame_ms"])
    floor, first = statistics.median(floors), statistics.median(opened)
    print(
        f"open_compare_2x{TOKENS}: first frame median {first:.0f} ms vs {floor:.0f} ms for an "
        f"empty screen, ratio {first / floor:.1f}x (goal < 200 ms; each: "
        f"{', '.join(f'{o:.0f}' for o in opened)} ms)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
