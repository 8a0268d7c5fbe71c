"""Images load through the blob loader; anything that cannot be shown becomes a one-line note."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from core.sessions.content import ImageContent, ToolCallContent
from core.sessions.persistence import Blob
from tests.tui.snapshot_apps.chat_data import (
    BlobShelf,
    EntryMaker,
    assistant,
    pixel_bomb_png,
    png_bytes,
    tool_result,
    user,
)
from tests.tui.test_chat_view import ChatTestApp, screen_text
from tests.tui.test_chat_view_window import settle
from tui.terminal_answers import textual_image_widgets
from tui.widgets import _images
from tui.widgets._images import decode_image
from tui.widgets.image_view import ImageView


async def show_images(
    images: list[ImageContent], loader
) -> tuple[list[ImageView], list[type], str]:  # type: ignore[no-untyped-def]
    """Show a user message with ``images``: the image views, the picture widgets' types, the screen."""
    app = ChatTestApp(blob_loader=loader)
    async with app.run_test(size=(100, 50)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries([make(user("look", images=images))])
        await settle(pilot, app)
        views = list(app.query(ImageView))
        pictures = [type(picture) for picture in app.query(".image-picture")]
        return views, pictures, screen_text(app)


async def test_a_png_from_the_blob_loader_is_drawn_with_its_caption(tmp_path) -> None:
    path = tmp_path / "picture.png"
    path.write_bytes(png_bytes(160, 80))
    shelf = BlobShelf()
    image = shelf.put("f" * 64, path.read_bytes(), width=160, height=80)
    [view], pictures, text = await show_images([image], shelf.load)
    assert shelf.requests == ["f" * 64]
    assert view.decoded is not None and view.decoded.image is not None
    # Through the app's own import, which tells textual-image what the terminal said.
    assert pictures == [textual_image_widgets().HalfcellImage]
    size = len(path.read_bytes())
    assert f"image/png 160×80 · {size} B" in text
    assert "▀" in text  # half blocks


@pytest.mark.parametrize(
    ("data", "note"),
    [
        (b"this is not an image at all", "not a readable image"),
        (pixel_bomb_png(), "image too large to show"),
        (png_bytes(400, 300)[:300], "image is truncated and cannot be shown"),
        (b"", "image is empty"),
    ],
    ids=["garbage", "pixel-bomb", "truncated", "empty"],
)
async def test_unshowable_images_become_a_note(data: bytes, note: str) -> None:
    shelf = BlobShelf()
    image = shelf.put("c" * 64, data, width=400, height=300)
    [view], pictures, text = await show_images([image], shelf.load)
    assert f"⚠ {note}" in text
    assert pictures == [] and view.decoded is not None and view.decoded.image is None


async def test_missing_and_failing_loads_become_a_note() -> None:
    async def failing(sha: str) -> Blob | None:
        raise OSError("disk on fire \x1b[2J")

    missing = ImageContent("image/png", "d" * 64, 10, 10)
    _, _, text = await show_images([missing], BlobShelf().load)
    assert "⚠ image missing (dddddddddddd…)" in text
    _, _, text = await show_images([missing], failing)
    assert "⚠ could not load image: OSError" in text and "\x1b" not in text
    _, _, text = await show_images([missing], None)
    assert "⚠ image not available here" in text


async def test_images_in_tool_results_show_in_the_card() -> None:
    shelf = BlobShelf()
    image = shelf.put("e" * 64, png_bytes(40, 40), width=40, height=40)
    app = ChatTestApp(blob_loader=shelf.load)
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries(
            [
                make(assistant("", calls=(ToolCallContent("c1", "screenshot", {}),))),
                make(tool_result("c1", "took a screenshot", images=[image])),
            ]
        )
        await settle(pilot, app)
        assert "image/png 40×40" in screen_text(app)
        assert app.query_one(ImageView).decoded is not None


def test_decoding_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    data = png_bytes(200, 100)
    decoded = decode_image(data, "image/png")
    assert decoded.image is not None and (decoded.width, decoded.height) == (200, 100)
    assert decoded.caption == f"image/png 200×100 · {len(data)} B"

    monkeypatch.setattr(_images, "MAX_BYTES", 100)
    note = decode_image(data, "image/png").note
    assert (
        note is not None and note.startswith("image too large to show (") and "limit 100 B" in note
    )
    monkeypatch.setattr(_images, "MAX_BYTES", 20 * 1024 * 1024)
    monkeypatch.setattr(_images, "MAX_PIXELS", 100 * 99)
    assert decode_image(data, "image/png").note == "image too large to show (200×100 pixels)"


def test_big_images_are_shrunk_for_display() -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (4000, 3000), "white").save(buffer, "PNG")
    decoded = decode_image(buffer.getvalue(), "image/png\x1b[31m")
    assert decoded.image is not None
    assert max(decoded.image.size) <= max(_images.DISPLAY_MAX)
    assert (decoded.width, decoded.height) == (4000, 3000)
    assert "\x1b" not in decoded.caption
