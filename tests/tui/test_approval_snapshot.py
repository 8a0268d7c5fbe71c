"""What the tool approval dialog looks like (pytest-textual-snapshot).

The dialog is opened over a new session with a real ``write_file`` call and
the preview the tool makes; the agent loop that opens it in use is covered by
test_tools.py. (A reply waiting for approval when the harness ends the app
would be saved from the harness's own event loop, after which the test could
not close the store from another.)

Update after a deliberate change with ``pytest tests/tui/test_approval_snapshot.py --snapshot-update``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.sessions.content import ToolCallContent
from tests.screenshots import steady_cursor
from tui.cli import build_parser
from tui.modes.launch import build_app, prepare_launch
from tui.screens.approval import ApprovalScreen


def test_approval_dialog_with_a_write_file_diff(
    tmp_path: Path, snap_compare, monkeypatch: pytest.MonkeyPatch
) -> None:
    """write_file replacing a line of notes.txt and adding one: the coloured diff, the full
    arguments and the y / a / n / escape choices, over the chat."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("Meeting notes\n- budget approved\n- launch in May\n")
    monkeypatch.chdir(work)
    arguments = {
        "path": "notes.txt",
        "content": "Meeting notes\n- budget approved\n- launch in June\n- hire two engineers\n",
    }
    call = ToolCallContent("call_1", "write_file", arguments, json.dumps(arguments))
    args = build_parser().parse_args(["--db", str(tmp_path / "t.db"), "--model", "demo"])
    app, store = asyncio.run(build_app(args, prepare_launch(args)))

    async def run_before(pilot) -> None:
        await pilot.pause()
        steady_cursor(pilot)
        registry = pilot.app.tool_registry
        tool = registry.get("write_file")
        preview = await tool.make_preview(arguments, registry.context())
        await pilot.app.push_screen(ApprovalScreen(call, tool, preview, {}, lambda typed: None))
        await pilot.pause()
        steady_cursor(pilot)

    try:
        assert snap_compare(app, run_before=run_before, terminal_size=(100, 32))
    finally:
        asyncio.run(store.close())
