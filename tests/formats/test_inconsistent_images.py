"""Images in imported files are checked against their bytes: a blob whose
stated size contradicts them is corrected with a note, bytes that do not decode
are refused with a line number, an image with no bytes is noted with its line."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from core.formats import FormatError, parse_import
from core.formats.tangents_json import to_json_document
from core.sessions.content import ImageContent, TextContent
from core.sessions.entries import Entry
from core.sessions.ids import uuid7
from core.sessions.messages import Message
from core.sessions.persistence import Blob, SessionInfo
from tests.core.test_images import png, with_pixels_cut_short
from tests.formats.test_hostile_json import PI_HEADER


def export_with(blob: Blob, image: ImageContent) -> str:
    session_id = uuid7()
    user = Entry.new(session_id, None, Message("user", (TextContent("look"), image)))
    info = SessionInfo(session_id, "pics", user.created_at, user.created_at, leaf_id=user.id)
    return json.dumps(to_json_document(info, [user], {}, [blob]), indent=2)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_a_blob_whose_stated_size_contradicts_its_bytes_is_corrected() -> None:
    data = png(4, 3)
    sha = hashlib.sha256(data).hexdigest()
    lying = Blob(sha, "image/gif", 1_000_000_000_000, -5, data)
    text = export_with(lying, ImageContent("image/gif", sha, 1_000_000_000_000, -5))
    imported = parse_import(text)
    [blob] = imported.blobs
    assert (blob.media_type, blob.width, blob.height) == ("image/png", 4, 3)
    [image] = imported.entries[0].payload.images
    assert (image.media_type, image.width, image.height) == ("image/png", 4, 3)
    blobs_line = line_of(text, '"blobs"')
    assert imported.notes == (
        f"line {blobs_line + 1}: blobs[0] said image/gif "
        "1000000000000×-5 but holds image/png 4×3; corrected",
        "1 image block(s) stated a type or size other than their image's; corrected",
    )


def test_blob_bytes_that_do_not_decode_are_refused_with_their_line() -> None:
    data = with_pixels_cut_short(png())
    sha = hashlib.sha256(data).hexdigest()
    text = export_with(Blob(sha, "image/png", 64, 64, data), ImageContent("image/png", sha, 64, 64))
    with pytest.raises(FormatError) as caught:
        parse_import(text)
    assert caught.value.line == line_of(text, '"blobs"') + 1
    assert "not a readable PNG" in caught.value.reason


def test_an_image_with_no_bytes_in_the_file_is_noted_with_its_line() -> None:
    sha = "ab" * 32
    session_id = uuid7()
    user = Entry.new(session_id, None, Message("user", (ImageContent("image/png", sha, 1, 1),)))
    info = SessionInfo(session_id, "pics", user.created_at, user.created_at, leaf_id=user.id)
    text = json.dumps(to_json_document(info, [user], {}), indent=2)
    imported = parse_import(text)
    entries_line = line_of(text, '"entries"')
    assert imported.notes[0].startswith(f"line {entries_line + 1}: 1 image(s) have no data")


def test_a_pi_image_with_its_pixels_cut_short_is_refused_with_its_line() -> None:
    data = base64.b64encode(with_pixels_cut_short(png())).decode()
    user = (
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-10T09:00:03.000Z",'
        '"message":{"role":"user","content":[{"type":"image","data":"'
        + data
        + '","mimeType":"image/png"}]}}'
    )
    with pytest.raises(FormatError) as caught:
        parse_import(f"{PI_HEADER}\n{user}\n", "pi")
    assert caught.value.line == 2 and "image" in caught.value.reason


def test_an_openai_data_url_with_its_pixels_cut_short_is_refused_with_its_line() -> None:
    url = "data:image/png;base64," + base64.b64encode(with_pixels_cut_short(png())).decode()
    text = json.dumps(
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}], indent=2
    )
    with pytest.raises(FormatError) as caught:
        parse_import(text, "openai")
    assert caught.value.line == 2 and "image" in caught.value.reason
