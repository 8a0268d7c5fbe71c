"""The app at 80x24 (issue 12): the chat, help, the session picker and the tree
still show what matters. Update with ``--snapshot-update`` and look at the report."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from tests.screenshots import SCENES, drive, open_scene

NARROW = (80, 24)


@pytest.fixture
def narrow(tmp_path: Path):
    """A scene of ``tests.screenshots`` at 80x24, with extra keys pressed."""
    stores = []

    def open_(name: str, keys: tuple[str, ...] | None = None):
        scene = replace(SCENES[name], size=NARROW, fit=False)  # the whole 80x24 terminal
        if keys is not None:
            scene = replace(scene, keys=keys)
        app, store = asyncio.run(open_scene(scene, tmp_path))
        stores.append(store)
        return {"app": app, "run_before": partial(drive, scene), "terminal_size": NARROW}

    yield open_
    for store in stores:
        asyncio.run(store.close())


def test_chat_at_80_columns(snap_compare, narrow) -> None:
    """A branched chat, a reply focused (tinted under its text too): ◀ 2/2 ▶, the footer one line of its keys, esc back last."""
    assert snap_compare(**narrow("branches"))


def test_footer_at_80_columns(snap_compare, narrow) -> None:
    """The same chat with the input focused: the footer keeps model, thinking, context and the help hint."""
    assert snap_compare(**narrow("branches", keys=()))


def test_help_at_80_columns(snap_compare, narrow) -> None:
    """Help: the newline note first, then keys in a narrow column and descriptions that read as sentences."""
    assert snap_compare(**narrow("help"))


def test_picker_at_80_columns(snap_compare, narrow) -> None:
    """The session picker: the row's counts at the right uncut, the hints wrapped under the list."""
    assert snap_compare(**narrow("branches", keys=("ctrl+o",)))


def test_tree_at_80_columns(snap_compare, narrow) -> None:
    """The session tree: every branch, the current entry highlighted and in view."""
    assert snap_compare(**narrow("tree"))


def test_round_table_at_80_columns(snap_compare, narrow) -> None:
    """A round table at 80x24: every reply's header still names its agent before its model."""
    assert snap_compare(**narrow("round_table"))
