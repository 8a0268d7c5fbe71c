"""Chat view benchmarks: opening a long path, and streaming a long reply.

Run with ``python tests/bench/bench_chat_view.py``. Each case runs headless
(``run_test(size=(120, 40))``) in a fresh process so memory figures are not
mixed up; every figure is printed beside its goal and a floor measured in the
same run (an empty chat view). These machines are shared and noisy: read the
ratios, not the absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZE = (120, 40)
STREAM_TOKENS = 20_000


def rss_mb() -> float:
    """Resident memory of this process now, in MB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


async def settle(pilot, app) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        await pilot.pause()
        busy = [worker for worker in app.workers if worker.group != "reply-render"]
        if busy:
            await app.workers.wait_for_complete(busy)
    await pilot.pause()


def bench_app():  # type: ignore[no-untyped-def]
    from textual.app import App, ComposeResult
    from textual.widgets import Input

    from tui.widgets.chat_view import ChatView

    class TimedInput(Input):
        def __init__(self) -> None:
            super().__init__()
            self.changes: list[float] = []

        def watch_value(self, value: str) -> None:
            self.changes.append(time.perf_counter())

    class BenchApp(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatView()
            yield TimedInput()

    return BenchApp, ChatView, TimedInput


# --- cases (each in its own process) ----------------------------------------------


async def case_open(count: int, trace: bool = False) -> dict[str, float]:
    """Open a path of ``count`` entries (user questions, Markdown replies with code).

    With ``trace``, allocations are traced (which slows Python down: timings of
    that run are not used)."""
    from tests.tui.snapshot_apps.chat_data import long_history
    from tui.widgets.message_widget import MessageWidget

    BenchApp, ChatView, _ = bench_app()
    entries = long_history(count) if count else []
    app = BenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        chat = app.query_one(ChatView)
        if trace:
            tracemalloc.start()
        started = time.perf_counter()
        await chat.set_entries(entries)
        await settle(pilot, app)
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] if trace else 0
        tracemalloc.stop()
        return {
            "seconds": seconds,
            "rss_mb": rss_mb(),
            "traced_peak_mb": peak / 1e6,
            "rows_mounted": len(app.query(MessageWidget)),
            "widgets": len(list(app.screen.walk_children())),
        }


async def case_stream(total: int) -> dict[str, object]:
    """Feed a ``total``-token Markdown reply as fast as the event loop lets a producer run."""
    from textual import events

    from core.providers.base import TextDelta
    from tests.tui.snapshot_apps.chat_data import EntryMaker, assistant, reply_tokens, user

    BenchApp, ChatView, TimedInput = bench_app()
    tokens = reply_tokens(total)
    ends = []  # character offset where each token ends
    offset = 0
    for token in tokens:
        offset += len(token)
        ends.append(offset)
    app = BenchApp()
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        make = EntryMaker()
        await chat.set_entries([make(user("Write a long answer with code."))])
        await settle(pilot, app)
        box = app.query_one(TimedInput)
        box.focus()
        await pilot.pause()
        reply = chat.start_reply("bench/model")
        await pilot.pause()

        # Every painted frame: when, and how much of the reply had been handed to Markdown.
        frames: list[tuple[float, int]] = []
        screen = app.screen
        original_refresh = screen._compositor_refresh

        def recording_refresh() -> None:
            original_refresh()
            frames.append((time.perf_counter(), reply.rendered_chars))

        screen._compositor_refresh = recording_refresh  # type: ignore[method-assign]

        # A keystroke every 50 ms while the reply streams: how long until the input shows it?
        latencies: list[float] = []
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
        for token in tokens:
            reply.feed(TextDelta(token))
            await asyncio.sleep(0)
        fed = time.perf_counter()
        await reply.finish(make(assistant("".join(tokens))))
        await pilot.pause()
        finished = time.perf_counter()
        streaming = False
        await typist
        screen._compositor_refresh = original_refresh  # type: ignore[method-assign]
        assert reply.source == "".join(tokens)

        def shown_at(chars: int) -> float:
            """When the frames first showed ``chars`` characters (interpolated between frames)."""
            previous_time, previous_chars = started, 0
            for when, count in frames:
                if count >= chars:
                    if count == previous_chars:
                        return when
                    share = (chars - previous_chars) / (count - previous_chars)
                    return previous_time + share * (when - previous_time)
                previous_time, previous_chars = when, count
            return finished

        first = 1000 / max(1e-9, shown_at(ends[999]) - started)
        last = 1000 / max(1e-9, shown_at(ends[-1]) - shown_at(ends[-1001]))
        return {
            "tokens": len(tokens),
            "seconds": finished - started,
            "feed_seconds": fed - started,
            "first_1000_tps": first,
            "last_1000_tps": last,
            "frames": len(frames),
            "renders": reply.renders,
            "segments": len(reply.text_parts[0].segments),
            "hidden_segments": sum(segment.is_hidden for segment in reply.text_parts[0].segments),
            "widgets": len(list(app.screen.walk_children())),
            "key_latency_ms": sorted(1000 * latency for latency in latencies),
        }


async def case_paced(total: int, chunk: int = 200) -> dict[str, object]:
    """Feed the reply ``chunk`` tokens at a time, each as soon as the previous one is on
    screen (a producer with back-pressure): the time each chunk takes shows whether
    the view slows down as the reply grows."""
    from core.providers.base import TextDelta
    from tests.tui.snapshot_apps.chat_data import EntryMaker, assistant, reply_tokens, user

    BenchApp, ChatView, _ = bench_app()
    tokens = reply_tokens(total)
    app = BenchApp()
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        make = EntryMaker()
        await chat.set_entries([make(user("Write a long answer with code."))])
        await settle(pilot, app)
        reply = chat.start_reply("bench/model")
        await pilot.pause()
        painted = [0]
        screen = app.screen
        original_refresh = screen._compositor_refresh

        def counting_refresh() -> None:
            original_refresh()
            painted[0] += 1

        screen._compositor_refresh = counting_refresh  # type: ignore[method-assign]

        async def on_screen() -> None:
            """Until the render loop took everything, Markdown appended it and a frame was painted.
            (Not ``pilot.pause()``: it visits every widget, so it slows down as the reply grows.)"""
            while not reply.caught_up:
                await asyncio.sleep(0.001)
            for part in reply.text_parts:
                stream, live = part._stream, part._live
                while (stream is not None and stream._pending) or (
                    live is not None and live.lock.is_locked
                ):
                    await asyncio.sleep(0.001)
            frame = painted[0]
            deadline = time.perf_counter() + 0.5
            while painted[0] == frame and time.perf_counter() < deadline:
                await asyncio.sleep(0.001)

        times: list[float] = []
        started = time.perf_counter()
        for start in range(0, len(tokens), chunk):
            chunk_started = time.perf_counter()
            for token in tokens[start : start + chunk]:
                reply.feed(TextDelta(token))
            await on_screen()
            times.append(time.perf_counter() - chunk_started)
        await reply.finish(make(assistant("".join(tokens))))
        await pilot.pause()
        seconds = time.perf_counter() - started
        screen._compositor_refresh = original_refresh  # type: ignore[method-assign]
        per_thousand = 1000 // chunk
        first = sum(times[:per_thousand])
        last = sum(times[-per_thousand:])
        return {
            "tokens": len(tokens),
            "seconds": seconds,
            "first_1000_tps": 1000 / first,
            "last_1000_tps": 1000 / last,
            "hidden_segments": sum(segment.is_hidden for segment in reply.text_parts[0].segments),
            "segments": len(reply.text_parts[0].segments),
            "chunk_seconds": times,
        }


def child(case: str, number: int) -> None:
    if case == "open":
        result = asyncio.run(case_open(number))
    elif case == "open-trace":
        result = asyncio.run(case_open(number, trace=True))
    elif case == "stream":
        result = asyncio.run(case_stream(number))
    else:
        result = asyncio.run(case_paced(number))
    print(json.dumps(result))


def run_case(case: str, number: int) -> dict:
    completed = subprocess.run(
        [sys.executable, __file__, "--case", case, "--n", str(number)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    if completed.returncode != 0:
        raise SystemExit(f"{case} {number} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--case", choices=["open", "open-trace", "stream", "paced"])
    parser.add_argument("--n", type=int, default=0)
    args = parser.parse_args()
    if args.case:
        child(args.case, args.n)
        return

    print(
        f"chat view benchmarks, headless {SIZE[0]}x{SIZE[1]}, load average {os.getloadavg()[0]:.2f}"
    )
    floor = run_case("open", 0)
    small = run_case("open", 10)
    large = run_case("open", 10_000)
    small_traced = run_case("open-trace", 10)
    large_traced = run_case("open-trace", 10_000)
    print(f"floor_empty_chat: {floor['seconds']:.2f} s, {floor['rss_mb']:.0f} MB RSS")
    print(
        f"open_10k_vs_10: {large['seconds']:.2f} s vs {small['seconds']:.2f} s "
        f"ratio {large['seconds'] / small['seconds']:.2f}x (goal < 2x)"
    )
    print(
        f"open_10k_vs_10_rss: {large['rss_mb']:.0f} MB vs {small['rss_mb']:.0f} MB "
        f"ratio {large['rss_mb'] / small['rss_mb']:.2f}x (goal < 2x; includes the 10,000 entries themselves)"
    )
    print(
        f"open_10k_vs_10_traced: {large_traced['traced_peak_mb']:.1f} MB vs {small_traced['traced_peak_mb']:.1f} MB "
        f"ratio {large_traced['traced_peak_mb'] / small_traced['traced_peak_mb']:.2f}x "
        "(goal < 2x; peak allocations while opening)"
    )
    print(
        f"open_rows_mounted: {large['rows_mounted']} of 10,000 vs {small['rows_mounted']} of 10 "
        f"({large['widgets']} vs {small['widgets']} widgets)"
    )

    stream = run_case("stream", STREAM_TOKENS)
    tps = stream["tokens"] / stream["seconds"]
    print(
        f"stream_20k_tokens: {stream['seconds']:.2f} s, {tps:,.0f} tokens/s overall (goal >= 2,000); "
        f"producer done after {stream['feed_seconds']:.2f} s"
    )
    paced = run_case("paced", STREAM_TOKENS)
    ratio = paced["last_1000_tps"] / paced["first_1000_tps"]
    print(
        f"stream_last_vs_first_1000: {paced['last_1000_tps']:,.0f} vs {paced['first_1000_tps']:,.0f} tokens/s "
        f"ratio {ratio:.2f}x (goal >= 0.5x; 200-token chunks, each fed once the last is on screen: "
        f"{paced['tokens'] / paced['seconds']:,.0f} tokens/s overall, {paced['hidden_segments']} of "
        f"{paced['segments']} segments hidden)"
    )
    print(
        f"stream_shape: {stream['segments']} segments ({stream['hidden_segments']} hidden), "
        f"{stream['widgets']} widgets, {stream['renders']} renders, {stream['frames']} frames"
    )
    latencies = stream["key_latency_ms"]
    if latencies:
        print(
            f"stream_key_latency: median {statistics.median(latencies):.0f} ms, "
            f"p95 {latencies[int(0.95 * (len(latencies) - 1))]:.0f} ms, max {latencies[-1]:.0f} ms "
            f"over {len(latencies)} keys"
        )


if __name__ == "__main__":
    main()
