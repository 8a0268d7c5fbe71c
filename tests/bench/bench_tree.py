"""The session tree on a big session, each figure beside a floor from the same run.

Run: ``python tests/bench/bench_tree.py``.

- index_rows: ``SessionTree.from_entries`` + ``rows()`` for 10,000 entries
  with 200 side branches vs the same for 100 entries with 2 branches, per
  entry. Goal: under 3x per entry (linear; the small run is mostly fixed
  costs and the machines are noisy), and under 100 ms in all.
- open_screen: pushing ``TreeScreen`` for that 10,000-entry tree in a headless
  app (``run_test``, 120x40) until the first frame vs the same app with a
  plain ``Static`` screen. Goal: under 300 ms (the brief), ratio shown.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.branching.tree import SessionTree  # noqa: E402
from tests.branching.builders import branched  # noqa: E402

BIG, BIG_BRANCHES = 10_000, 200
SMALL, SMALL_BRANCHES = 100, 2
ROWS_BUDGET_MS = 100.0
OPEN_BUDGET_MS = 300.0


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times)


def bench_index_rows() -> str:
    big, big_leaf = branched(BIG, BIG_BRANCHES)
    small, small_leaf = branched(SMALL, SMALL_BRANCHES)
    labels = {big_leaf: "here"}

    def build(entries, leaf):
        def run():
            tree = SessionTree.from_entries(entries, labels, leaf)
            tree.rows()

        return run

    big_ms = _best(build(big, big_leaf), 5)
    small_ms = _best(build(small, small_leaf), 50)
    per_big, per_small = big_ms / BIG, small_ms / SMALL
    tree = SessionTree.from_entries(big, labels, big_leaf)
    unfolded_ms = _best(lambda: tree.rows(fold_linear=False), 5)
    query_ms = _best(lambda: tree.rows(query="number 99"), 5)
    verdict = "ok" if big_ms < ROWS_BUDGET_MS else "OVER"
    return (
        f"index_rows: {big_ms:.2f} ms for {BIG} entries/{BIG_BRANCHES} branches "
        f"({len(tree.rows())} rows folded)  floor {small_ms:.3f} ms for {SMALL}  "
        f"per-entry ratio {per_big / per_small:.2f}x (goal < 3x; budget {ROWS_BUDGET_MS:g} ms: {verdict})\n"
        f"rows_unfolded: {unfolded_ms:.2f} ms  rows_query: {query_ms:.2f} ms (cached index)"
    )


async def _open_ms(make_screen) -> float:
    from textual.app import App
    from textual.widgets import Static

    class Host(App[None]):
        def compose(self):
            yield Static("host")

    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        start = time.perf_counter()
        await app.push_screen(make_screen())
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        elapsed = (time.perf_counter() - start) * 1000
    return elapsed


def bench_open_screen() -> str:
    from textual.screen import Screen
    from textual.widgets import Static

    from tui.screens.tree import TreeScreen

    entries, leaf = branched(BIG, BIG_BRANCHES)

    class Plain(Screen):
        def compose(self):
            yield Static("plain")

    def tree_screen():
        return TreeScreen(SessionTree.from_entries(entries, {}, leaf))

    tree_times = [asyncio.run(_open_ms(tree_screen)) for _ in range(3)]
    plain_times = [asyncio.run(_open_ms(Plain)) for _ in range(3)]
    tree_ms, plain_ms = statistics.median(tree_times), statistics.median(plain_times)
    verdict = "ok" if tree_ms < OPEN_BUDGET_MS else "OVER"
    return (
        f"open_screen: {tree_ms:.2f} ms for {BIG} entries (incl. building the tree)  floor {plain_ms:.2f} ms "
        f"(plain screen)  ratio {tree_ms / plain_ms:.2f}x (budget {OPEN_BUDGET_MS:g} ms: {verdict})"
    )


def main() -> None:
    print(bench_index_rows(), flush=True)
    print(bench_open_screen(), flush=True)


if __name__ == "__main__":
    main()
