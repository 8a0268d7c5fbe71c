"""Screenshots fill their frame (issue 33 item 12): the chat sits at the
bottom of its view, so a short conversation left most of a picture blank
(``branches.svg`` was ~40% empty). A chat scene ends with the terminal as
tall as what it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.screenshots import SCENES, drive, open_scene


def blank_rows_above_the_chat(app) -> int:
    view = app.screen.chat_view
    shown = [c for c in view.children if c.display and c.region.height]
    top = min(c.region.y - c.styles.margin.top for c in shown)
    return top - view.content_region.y


@pytest.mark.parametrize("name", ["branches", "error", "tool", "image"])
async def test_a_chat_scene_has_no_blank_band(name: str, tmp_path: Path) -> None:
    scene = SCENES[name]
    app, store = await open_scene(scene, tmp_path)
    try:
        async with app.run_test(size=scene.size) as pilot:
            await drive(scene, pilot)
            assert blank_rows_above_the_chat(app) <= 0
            assert app.size.width == scene.size[0]
    finally:
        await store.close()
