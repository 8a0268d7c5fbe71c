"""What the compare screen looks like: the README's compare scene (three
models' answers to one question, differences highlighted) at two sizes.

Update after a deliberate change with ``pytest tests/compare/test_compare_snapshots.py
--snapshot-update`` and look at the report before committing.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from tests.screenshots import SCENES, drive, open_scene


@pytest.fixture
def compare_scene(tmp_path: Path):
    stores = []

    def open_(size: tuple[int, int]):
        scene = replace(SCENES["compare"], size=size)
        app, store = asyncio.run(open_scene(scene, tmp_path))
        stores.append(store)
        return {"app": app, "run_before": partial(drive, scene), "terminal_size": size}

    yield open_
    for store in stores:
        asyncio.run(store.close())


def test_compare_screen_120x40(snap_compare, compare_scene) -> None:
    """The question on top; three columns, each with its model, then tokens · cost · seconds;
    the words where the answers differ highlighted; the third column (the current reply) focused."""
    assert snap_compare(**compare_scene((120, 40)))


def test_compare_screen_80x24(snap_compare, compare_scene) -> None:
    """The same at 80x24: narrower columns, the long model name cut, figures on their own line."""
    assert snap_compare(**compare_scene((80, 24)))
