"""What the app looks like: SVG snapshots of the scenes in ``tests.screenshots``
(the README's pictures) and of a real failed request.

Update after a deliberate change with ``pytest tests/tui/test_app_snapshots.py --snapshot-update``
and look at the report before committing.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import pytest
from fake_provider import Fail

from tests.screenshots import SCENES, drive, open_scene, steady_cursor
from tests.tui.helpers import send
from tui.cli import build_parser
from tui.modes.launch import build_app, prepare_launch


@pytest.fixture
def scene(tmp_path: Path, fixed_ids: None):
    """Open a scene's app (sync, for snap_compare); its store is closed afterwards."""
    stores = []

    def open_(name: str):
        app, store = asyncio.run(open_scene(SCENES[name], tmp_path))
        stores.append(store)
        return {
            "app": app,
            "run_before": partial(drive, SCENES[name]),
            "terminal_size": SCENES[name].size,
        }

    yield open_
    for store in stores:
        asyncio.run(store.close())


def test_empty_session(snap_compare, scene) -> None:
    """A new user without a key: the welcome explains keys and --api-base, the footer says demo (offline)."""
    assert snap_compare(**scene("empty"))


def test_alternatives_on_a_focused_reply(snap_compare, scene) -> None:
    """A reply regenerated once: focused, it shows ◀ 2/2 ▶ above it."""
    assert snap_compare(**scene("branches"))


def test_session_tree(snap_compare, scene) -> None:
    """Every branch with its connectors, the current path highlighted, the leaf marked."""
    assert snap_compare(**scene("tree"))


def test_help_screen(snap_compare, scene) -> None:
    """F1 over an empty session: every key with its keymap id, then the slash commands."""
    assert snap_compare(**scene("help"))


def test_a_whole_conversation(snap_compare, scene) -> None:
    """120x40 filled: the question, thinking, a read_file card, the answer flipped to ◀ 2/3 ▶ and still focused (its keys in the footer), a follow-up."""
    assert snap_compare(**scene("conversation"))


def test_streamed_reply_with_code(snap_compare, scene) -> None:
    """The demo model's streamed reply: the thinking line, Markdown with a list and a Python code block."""
    assert snap_compare(**scene("reply"))


def test_tool_call_card(snap_compare, scene) -> None:
    """A seeded tool call card with its arguments and result, then the answer (screenshots' tool scene)."""
    assert snap_compare(**scene("tool"))


def test_error_line_from_a_server_error(
    snap_compare, fake_provider, fake_args, tmp_path: Path, fixed_ids: None
) -> None:
    """A request the fake provider fails with HTTP 500 four times: the reply is an error line with a retry hint."""
    fake_provider.script(*[Fail(500, retry_after=0) for _ in range(4)])
    args = build_parser().parse_args(["--db", str(tmp_path / "t.db"), *fake_args])
    app, store = asyncio.run(build_app(args, prepare_launch(args)))

    async def run_before(pilot) -> None:
        await pilot.pause()  # the input takes focus once the screen is mounted
        steady_cursor(pilot)
        await send(pilot, "Summarise the meeting notes.")

    try:
        assert snap_compare(app, run_before=run_before, terminal_size=(100, 32))
    finally:
        asyncio.run(store.close())


def test_round_table(snap_compare, scene) -> None:
    """Critic and Poet answer in turn: each reply's header names its agent, in red and green."""
    assert snap_compare(**scene("round_table"))
