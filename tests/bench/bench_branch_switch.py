"""Switching branches in the chat, on a big session vs a small one.

Run: ``python tests/bench/bench_branch_switch.py`` (or ``run_all.py branch_switch``).

branch_switch: the chat screen's own leaf move (``BranchController.move_leaf``:
the path from the in-memory tree, the leaf persisted in SQLite, the chat view
rebuilt) until the first frame that shows the new path (its last row is the new
leaf: the frame may come before ``move_leaf`` returns), alternating between
the main line and a side branch of a session with 10,000 entries and 200
branches, vs the same in a 100-entry session with 2 branches (the floor,
measured in the same run). Goal: under 100 ms, ratio under 2x. Also printed:
the time until the app is idle again, which includes mounting the rows above
the viewport in the background (scrolling up finds them there).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.branching.builders import SESSION, branched, stamp  # noqa: E402

BIG, BIG_BRANCHES = 10_000, 200
SMALL, SMALL_BRANCHES = 100, 2
SWITCHES = 20
BUDGET_MS = 100.0


async def _switch_ms(n: int, branches: int, db: Path) -> tuple[float, float, float]:
    """Median ms of a switch to its first frame, to idle, and of its data part alone."""
    from core.branching.tree import SessionTree
    from core.chat.conversation import Conversation
    from core.sessions.persistence import SessionInfo
    from core.sessions.session import Session
    from core.settings import Settings
    from storage import SqliteStore
    from tui.modes.app import TangentsApp

    entries, main_leaf = branched(n, branches)
    store = await SqliteStore.open(db)
    try:
        info = SessionInfo(
            id=SESSION, title="bench", created_at=stamp(0), updated_at=stamp(n), leaf_id=main_leaf
        )
        await store.create_session(info, entries)
        session = await Session.open(store, SESSION)
        tree = SessionTree.from_entries(entries, {}, main_leaf)
        side_leaf = next(
            e.id for e in reversed(entries) if tree.is_leaf(e.id) and e.id != main_leaf
        )

        def make_conversation(session: Session) -> Conversation:
            return Conversation(
                session, Settings(), default_model="demo", default_thinking="off", api_base=None
            )

        app = TangentsApp(make_conversation(session), make_conversation=make_conversation)
        times: list[float] = []
        idle: list[float] = []
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            while not screen.loaded:
                await pilot.pause()
            await screen.conversation.tree()
            await app.workers.wait_for_complete()
            await pilot.pause()
            frames: list[tuple[float, str | None]] = []
            display = app._display
            chat = screen.chat_view

            def record_frame(*args: object) -> None:
                rows = chat.message_widgets
                frames.append((time.perf_counter(), rows[-1].entry_id if rows else None))
                display(*args)

            app._display = record_frame  # every frame the app draws passes here
            for index in range(SWITCHES):
                target = side_leaf if index % 2 == 0 else main_leaf
                frames.clear()
                start = time.perf_counter()
                await screen.branches.move_leaf(target)
                await pilot.pause()
                idle.append((time.perf_counter() - start) * 1000)
                # The first frame whose last row is the new leaf: the new path on screen.
                times.append((next(t for t, last in frames if last == target) - start) * 1000)
            assert session.leaf_id == main_leaf
            data: list[float] = []  # the same moves without the chat view: tree path + leaf write
            for index in range(SWITCHES):
                target = side_leaf if index % 2 == 0 else main_leaf
                start = time.perf_counter()
                live = await screen.conversation.tree()
                await session.move_leaf(target, path=live.path_entries(target, session.path))
                data.append((time.perf_counter() - start) * 1000)
        return statistics.median(times), statistics.median(idle), statistics.median(data)
    finally:
        await store.close()


def bench_branch_switch() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        small, small_idle, small_data = asyncio.run(
            _switch_ms(SMALL, SMALL_BRANCHES, Path(tmp) / "small.db")
        )
        big, big_idle, big_data = asyncio.run(_switch_ms(BIG, BIG_BRANCHES, Path(tmp) / "big.db"))
    verdict = "ok" if big < BUDGET_MS else "OVER"
    return (
        f"branch_switch: {big:.1f} ms median for {BIG} entries/{BIG_BRANCHES} branches  "
        f"floor {small:.1f} ms for {SMALL} entries  ratio {big / small:.2f}x "
        f"(goal < 2x; budget {BUDGET_MS:g} ms: {verdict})\n"
        f"branch_switch_idle (until the rows above are mounted too): {big_idle:.1f} ms  "
        f"floor {small_idle:.1f} ms  ratio {big_idle / small_idle:.2f}x\n"
        f"branch_switch_data (tree path + leaf write, no view): {big_data:.1f} ms  "
        f"floor {small_data:.1f} ms  ratio {big_data / small_data:.2f}x"
    )


def main() -> None:
    print(bench_branch_switch(), flush=True)


if __name__ == "__main__":
    main()
