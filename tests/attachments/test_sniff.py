"""The kind of a file comes from its first bytes, never from its name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.sessions.sniff import HEAD_BYTES, kind_of, sniff
from tests.attachments.samples import MP3_FRAME, id3, pdf_bytes, png_bytes, wav_bytes


@pytest.mark.parametrize(
    ("head", "media_type"),
    [
        (id3(100) + b"\x00" * 100, "audio/mpeg"),
        (MP3_FRAME, "audio/mpeg"),
        (b"OggS\x00\x02" + b"\x00" * 30, "audio/ogg"),
        (b"fLaC\x00\x00\x00\x22" + b"\x00" * 30, "audio/flac"),
        (wav_bytes(), "audio/wav"),
        (b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00", "audio/mp4"),
        (pdf_bytes(), "application/pdf"),
        (png_bytes(), "image/png"),
        (b"\xff\xd8\xff\xe0" + b"\x00" * 20, "image/jpeg"),
        (b"GIF89a" + b"\x00" * 20, "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
    ],
)
def test_each_kind_is_known_by_its_bytes(head: bytes, media_type: str) -> None:
    assert sniff(head[:HEAD_BYTES]) == media_type


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"hello, this is text named paper.pdf",
        b"RIFF\x10\x00",  # truncated before the form type
        b"ID3",  # truncated ID3 header
        b"ID3\x04\x00\x00\x80\x80\x80\x80",  # size bytes that are not syncsafe
        b"\xff\xfb",  # truncated frame header
        b"\xff\xff\xff\xff" + b"\x00" * 20,  # bad layer, bitrate and rate bits
        b"\x00\x00\x00\x20ftypisom",  # a video container, not M4A audio
        b"%PDF",  # truncated before the version dash
    ],
)
def test_other_bytes_are_no_kind(head: bytes) -> None:
    assert sniff(head) is None


def test_kinds() -> None:
    assert kind_of("audio/wav") == "audio"
    assert kind_of("application/pdf") == "pdf"
    assert kind_of("image/png") == "image"


@given(st.binary(max_size=HEAD_BYTES * 2))
def test_any_bytes_give_a_known_type_or_none(head: bytes) -> None:
    found = sniff(head)
    assert found is None or kind_of(found) in ("image", "audio", "pdf")
