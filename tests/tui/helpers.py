"""Helpers for driving the app with Pilot against a real database."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress

from rich.console import Console
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from tui.cli import build_parser
from tui.modes.app import TangentsApp
from tui.modes.launch import build_app, prepare_launch

SIZE = (100, 32)


@asynccontextmanager
async def running(
    argv: Sequence[str] = ("--model", "demo"), size: tuple[int, int] = SIZE
) -> AsyncIterator[Pilot]:
    """The app as ``tangents ARGV`` would start it (same flags, same database
    under TANGENTS_HOME), driven headless."""
    args = build_parser().parse_args(list(argv))
    app, store = await build_app(args, prepare_launch(args))
    try:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)  # the chat view fills in after the first frame
            yield pilot
    finally:
        await store.close()


async def settle(pilot: Pilot, timeout: float = 30.0) -> None:
    """Wait until the app is quiet: keys handled, every worker (the reply above
    all) done, and the repaint after it. A worker stopped (Esc) counts as done."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    await pilot.pause()
    while any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers):
        assert loop.time() < deadline, f"still busy: {[w.name for w in pilot.app.workers]}"
        with suppress(WorkerCancelled):
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    await pilot.pause()


async def wait_for(condition, pilot: Pilot, timeout: float = 10.0) -> None:
    """Pause until ``condition()`` holds (fails after ``timeout`` seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "timed out"
        await pilot.pause(0.05)


async def type_text(pilot: Pilot, text: str) -> None:
    """Type as a user would: one key per character."""
    await pilot.press(*[ch if ch != " " else "space" for ch in text])


async def send(pilot: Pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await settle(pilot)


def app_of(pilot: Pilot) -> TangentsApp:
    assert isinstance(pilot.app, TangentsApp)
    return pilot.app


def screen_text(pilot: Pilot) -> str:
    """What the terminal shows, as plain text (the same render as a screenshot)."""
    app = pilot.app
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        record=True,
        color_system=None,
        legacy_windows=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


def notifications(pilot: Pilot) -> list[str]:
    return [n.message for n in pilot.app._notifications]
