"""The app's syncs, one at a time (issue 34): at most one running and one
queued, however many are asked for; a quit waits a bounded time."""

from __future__ import annotations

import asyncio

from core.sync.auto import AutoSync
from core.sync.engine import SyncReport


class Gated:
    """A sync that waits until let through; counts how many began."""

    def __init__(self) -> None:
        self.began = 0
        self.gate = asyncio.Event()

    async def __call__(self) -> SyncReport:
        self.began += 1
        await self.gate.wait()
        return SyncReport("here")


async def test_a_burst_of_requests_runs_one_sync_and_queues_one() -> None:
    run = Gated()
    syncs = AutoSync(run, lambda: None)
    futures = [syncs.request() for _ in range(5)]
    await asyncio.sleep(0)  # the first sync begins
    assert syncs.running and run.began == 1
    run.gate.set()
    outcomes = await asyncio.gather(*futures)
    assert run.began == 2
    assert all(o.report is not None for o in outcomes)
    assert not syncs.running


async def test_a_failed_sync_is_one_line_and_the_next_runs() -> None:
    calls = []

    async def failing() -> SyncReport:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the folder is gone\nsecond line")
        return SyncReport("here")

    syncs = AutoSync(failing, lambda: None)
    first = await syncs.request()
    assert first.error == "the folder is gone"
    assert syncs.status(first.at) == "sync failed: the folder is gone"
    second = await syncs.request()
    assert second.report is not None
    assert syncs.status(second.at + 150) == "synced 2 min ago"
    assert syncs.status(second.at + 7300) == "synced 2 h ago"


async def test_a_quit_waits_at_most_its_bound() -> None:
    run = Gated()
    syncs = AutoSync(run, lambda: None)
    syncs.request()
    assert await syncs.finish(0.05) is False  # the running sync never ends by itself
    run.gate.set()
    assert await syncs.finish(30) is True
