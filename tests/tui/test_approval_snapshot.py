"""What the tool approval dialog looks like (pytest-textual-snapshot).

Update after a deliberate change with ``pytest tests/tui/test_approval_snapshot.py --snapshot-update``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fake_provider import Reply, ToolCall

from tests.tui.helpers import type_text
from tui.cli import build_parser
from tui.launch import build_app, prepare_launch
from tui.screens.approval import ApprovalScreen
from tui.screenshots import steady_cursor
from tui.widgets.tool_call_card import ToolCallCard


def test_approval_dialog_with_a_write_file_diff(
    snap_compare, fake_provider, fake_args, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write_file replacing a line of notes.txt: the dialog shows the coloured diff,
    the full arguments and the y / a / n / escape choices over the chat."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("Meeting notes\n- budget approved\n- launch in May\n")
    monkeypatch.chdir(work)
    fake_provider.script(
        Reply(
            text="I will fix the launch date.",
            tool_calls=[ToolCall("write_file", {
                "path": "notes.txt",
                "content": "Meeting notes\n- budget approved\n- launch in June\n- hire two engineers\n",
            })],
        ),
    )
    args = build_parser().parse_args(["--db", str(tmp_path / "t.db"), *fake_args])
    app, store = asyncio.run(build_app(args, prepare_launch(args)))

    async def run_before(pilot) -> None:
        await pilot.pause()
        steady_cursor(pilot)
        await type_text(pilot, "The launch moved to June.")
        await pilot.press("enter")
        chat = pilot.app.screen

        def ready() -> bool:
            """The dialog is open and the card under it shows the call waiting."""
            return isinstance(pilot.app.screen, ApprovalScreen) and [c.state for c in chat.query(ToolCallCard)] == ["pending"]

        deadline = asyncio.get_running_loop().time() + 15
        while not ready():
            assert asyncio.get_running_loop().time() < deadline, "no approval dialog"
            await asyncio.sleep(0.02)
        await pilot.pause(0.3)

    try:
        assert snap_compare(app, run_before=run_before, terminal_size=(100, 32))
    finally:
        asyncio.run(store.close())
