"""The demo model shows every part of the app without a key (issue 12): the
approval dialog for a side-effect tool, and summaries that summarize."""

from __future__ import annotations

from tests.tui.helpers import running, screen_text, send, settle, type_text
from tui.screens.approval import ApprovalScreen


async def test_the_demo_asks_to_write_in_its_scratch_directory() -> None:
    async with running(["--model", "demo"]) as pilot:
        await type_text(pilot, "write a file")
        await pilot.press("enter")
        # The dialog is pushed, then painted: wait for the path on screen.
        for _ in range(200):
            if isinstance(pilot.app.screen, ApprovalScreen) and "tangents-demo/notes.md" in (
                screen_text(pilot)
            ):
                break
            await pilot.pause(0.05)
        assert isinstance(pilot.app.screen, ApprovalScreen)
        assert "tangents-demo/notes.md" in screen_text(pilot)
        await pilot.press("escape")  # denied: nothing is written in the checkout
        await settle(pilot)
        assert not isinstance(pilot.app.screen, ApprovalScreen)


async def test_the_demo_compaction_summary_says_who_asked_what() -> None:
    async with running(["--model", "demo"]) as pilot:
        await send(pilot, "Plan three days in Lisbon")
        await send(pilot, "Which day has the best food?")
        await send(pilot, "/compact")
        text = screen_text(pilot)
        assert "compacted" in text
        entry = pilot.app.conversation.session.path[-1]
        assert "Plan three days in Lisbon" in entry.payload.summary
        assert "You said" not in entry.payload.summary
