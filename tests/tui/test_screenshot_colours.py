"""Screenshots show colours as a terminal shows them (issue 33 item 12):
``image.svg`` showed an image as grey shade characters where a terminal
without an image protocol shows it in coloured half cells."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tests.screenshots import SCENES, drive, open_scene

_RECT = re.compile(r'<rect fill="(#[0-9a-f]{6})" x="[\d.]+" y="([\d.]+)"')
_TEXT = re.compile(r'<text class="([\w-]+)"[^>]*clip-path="url\(#[\w-]+-line-(\d+)\)"')
_CLASS = re.compile(r"\.([\w-]+) \{ fill: (#[0-9a-f]{6})")
_ROW_TOP, _ROW_HEIGHT = 1.5, 24.4
"""Where Textual's SVG export puts a row's background."""


def colours_by_row(svg: str) -> Iterator[tuple[int, str]]:
    """Every (screen row, colour) the SVG paints: backgrounds and text."""
    for colour, y in _RECT.findall(svg):
        yield round((float(y) - _ROW_TOP) / _ROW_HEIGHT), colour
    classes = dict(_CLASS.findall(svg))
    for name, row in _TEXT.findall(svg):
        if name in classes:
            yield int(row), classes[name]


def is_grey(colour: str) -> bool:
    channels = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    return max(channels) - min(channels) < 48


async def test_the_image_screenshot_shows_the_pictures_colours(tmp_path: Path) -> None:
    """The picture's rows hold its sky, sun and grass: several distinct
    colours, not greys."""
    scene = SCENES["image"]
    app, store = await open_scene(scene, tmp_path)
    try:
        async with app.run_test(size=scene.size) as pilot:
            await drive(scene, pilot)
            picture = app.screen.query_one("ImageView .image-picture").region
            svg = app.export_screenshot()
    finally:
        await store.close()
    rows = range(picture.y, picture.bottom)
    assert len(rows) >= 3
    coloured = {c for row, c in colours_by_row(svg) if row in rows and not is_grey(c)}
    assert len(coloured) >= 3, coloured
