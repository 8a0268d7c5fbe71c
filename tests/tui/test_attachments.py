"""Attaching images: by pasting a path or with /image; bad files lose nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image
from textual import events

from core.sessions.attachments import AttachmentError, pasted_file_path
from core.sessions.content import ImageContent
from core.sessions.file_attachments import load_attachment
from tests.tui.helpers import app_of, notifications, running, send, settle
from tui.widgets.prompt_input import PromptInput


@pytest.fixture
def png(tmp_path: Path) -> Path:
    path = tmp_path / "cat picture.png"
    Image.new("RGB", (32, 24), "orange").save(path)
    return path


async def paste(pilot, text: str) -> None:
    pilot.app.screen.query_one(PromptInput).post_message(events.Paste(text))
    await settle(pilot)


def prompt_text(pilot) -> str:
    return pilot.app.screen.query_one(PromptInput).text


async def test_pasting_an_image_path_attaches_it_to_the_next_message(png: Path) -> None:
    async with running([]) as pilot:
        await paste(pilot, str(png))
        assert prompt_text(pilot) == "", "the path is not typed into the draft"
        bar = pilot.app.screen.query_one("#attachments")
        assert bar.display and "cat picture.png (image/png 32×24)" in str(bar.render())
        await send(pilot, "what is this?")
        app = app_of(pilot)
        user = next(
            e.message
            for e in app.conversation.session.path
            if e.message and e.message.role == "user"
        )
        [image] = [b for b in user.content if isinstance(b, ImageContent)]
        assert (image.media_type, image.width, image.height) == ("image/png", 32, 24)
        blob = await app.conversation.session.store.get_blob(image.sha256)
        assert blob is not None and blob.data == png.read_bytes()
        assert not bar.display, "attachments go with the message"


@pytest.mark.parametrize("form", ["quoted", "escaped", "url"])
async def test_paths_as_terminals_paste_dropped_files(png: Path, form: str) -> None:
    text = {"quoted": f"'{png}'", "escaped": str(png).replace(" ", "\\ "), "url": png.as_uri()}[
        form
    ]
    assert pasted_file_path(text) == png


async def test_image_command_attaches_and_detach_removes(png: Path) -> None:
    async with running([]) as pilot:
        await send(pilot, f"/image {png}")
        assert [a.name for a in pilot.app.screen.composer.attachments] == ["cat picture.png"]
        await send(pilot, "/detach")
        assert pilot.app.screen.composer.attachments == []


async def test_image_command_with_a_missing_file_keeps_the_command(tmp_path: Path) -> None:
    async with running([]) as pilot:
        await send(pilot, f"/image {tmp_path / 'nope.png'}")
        assert any("nope.png: no such file" in n for n in notifications(pilot))
        assert prompt_text(pilot) == f"/image {tmp_path / 'nope.png'}"


async def test_a_pasted_path_that_is_not_an_image_is_pasted_as_text(tmp_path: Path) -> None:
    fake = tmp_path / "notes.png"
    fake.write_text("just text, not a PNG")
    async with running([]) as pilot:
        await paste(pilot, str(fake))
        assert any("not an image, audio file or PDF" in n for n in notifications(pilot))
        assert prompt_text(pilot) == str(fake), "nothing lost: the paste arrives as text"
        assert pilot.app.screen.composer.attachments == []


async def test_a_file_over_20_mb_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.png"
    huge.write_bytes(b"\x89PNG\r\n\x1a\n")  # a PNG by its first bytes, sparse after them
    os.truncate(huge, 21 * 1024 * 1024)
    async with running([]) as pilot:
        await paste(pilot, str(huge))
        assert any("too large" in n and "20 MB" in n for n in notifications(pilot))
        assert prompt_text(pilot) == str(huge)


def test_too_many_pixels_is_refused_without_decoding(tmp_path: Path) -> None:
    path = tmp_path / "wide.png"
    Image.new("1", (10_000, 6_000)).save(path)  # 60 megapixels, a small file
    with pytest.raises(AttachmentError, match="too many pixels"):
        load_attachment(path)


def test_a_truncated_image_is_refused(tmp_path: Path, png: Path) -> None:
    broken = tmp_path / "broken.png"
    broken.write_bytes(png.read_bytes()[:60])
    with pytest.raises(AttachmentError, match="not a readable PNG"):
        load_attachment(broken)


def test_unsupported_image_formats_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "pic.png"
    Image.new("RGB", (4, 4)).save(path, format="BMP")
    with pytest.raises(AttachmentError, match="PNG, JPEG, GIF, WebP"):
        load_attachment(path)


def test_text_that_is_not_a_single_existing_image_path_is_not_an_attachment(
    tmp_path: Path, png: Path
) -> None:
    assert pasted_file_path("hello world") is None
    assert pasted_file_path(f"{png}\n{png}") is None
    assert pasted_file_path(str(tmp_path / "missing.png")) is None
    other = tmp_path / "notes.txt"
    other.write_text("x")
    assert pasted_file_path(str(other)) is None
    assert os.path.exists(png)
