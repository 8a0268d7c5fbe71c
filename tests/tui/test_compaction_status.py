"""The status line under the chat: a message queued for a moment (sent as a
reply ends) never shows and never moves the chat; one that waits longer shows,
and at once while a compaction shows."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tests.tui.helpers import screen_text, wait_for
from tui.widgets.compaction_status import QUEUED_SHOWN_AFTER, CompactionStatus


class StatusApp(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("the chat")
        yield CompactionStatus()

    @property
    def status(self) -> CompactionStatus:
        return self.query_one(CompactionStatus)


def count_layout_passes(app: App) -> list[None]:
    passes: list[None] = []
    screen = app.screen
    original = screen._refresh_layout

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        passes.append(None)
        return original(*args, **kwargs)

    screen._refresh_layout = counted  # type: ignore[method-assign]
    return passes


async def test_a_message_queued_for_a_moment_moves_nothing() -> None:
    app = StatusApp()
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        passes = count_layout_passes(app)
        app.status.queued = ("sent as the reply ended",)
        await pilot.pause()
        assert not app.status.display and "queued" not in screen_text(pilot)
        app.status.queued = ()  # taken from the queue and sent
        await pilot.pause(QUEUED_SHOWN_AFTER + 0.1)
        assert not app.status.display and "queued" not in screen_text(pilot)
        assert passes == []


async def test_a_message_that_waits_shows_then_goes() -> None:
    app = StatusApp()
    async with app.run_test(size=(60, 10)) as pilot:
        app.status.queued = ("while it streams",)
        await wait_for(lambda: "queued while it streams" in screen_text(pilot), pilot)
        app.status.queued = ("while it streams", "and another")
        await wait_for(lambda: "queued and another" in screen_text(pilot), pilot)
        app.status.queued = ()
        await wait_for(lambda: not app.status.display, pilot)
        assert "queued" not in screen_text(pilot)


async def test_while_compacting_a_queued_message_shows_at_once() -> None:
    app = StatusApp()
    async with app.run_test(size=(60, 10)) as pilot:
        app.status.progress = "Compacting… Esc to cancel"
        app.status.queued = ("meanwhile",)
        await pilot.pause()
        assert "queued meanwhile" in screen_text(pilot)
        app.status.progress = ""
        await pilot.pause()
        assert "queued meanwhile" in screen_text(pilot) and "Compacting" not in screen_text(pilot)
