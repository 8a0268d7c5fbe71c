"""What alternatives and labels look like on messages (SVG snapshot)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.tui.snapshot_apps.chat_data import EntryMaker, assistant, user
from tui.widgets._context import BranchInfo
from tui.widgets.chat_view import ChatView


class AlternativesApp(App[None]):
    """A labelled question, then the second of three answers to it."""

    CSS = "Screen { background: $surface; }"

    def __init__(self) -> None:
        super().__init__()
        make = EntryMaker()
        self.entries = [
            make(user("Plan the trip to Lisbon.")),
            make(assistant("Day 1: Alfama, then **Belém**.")),
        ]
        question, answer = self.entries
        self.info = {question.id: BranchInfo(0, 1, "trip plan"), answer.id: BranchInfo(1, 3)}

    def compose(self) -> ComposeResult:
        yield ChatView(branch_info=self.info.get)

    async def prepare(self, pilot: Pilot) -> None:
        await self.query_one(ChatView).set_entries(self.entries)
        await pilot.pause()
        await self.workers.wait_for_complete()
        await pilot.pause()


def test_message_with_alternatives_snapshot(snap_compare) -> None:
    """The question with "⚑ trip plan" above it; the answer with "◀ 2/3 ▶" above its model line."""
    app = AlternativesApp()

    async def run_before(pilot: Pilot) -> None:
        await app.prepare(pilot)

    assert snap_compare(app, terminal_size=(60, 12), run_before=run_before)
