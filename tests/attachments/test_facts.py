"""An attached file's duration (audio) and page count (PDF): read from its
headers, shown in its description, kept in the saved block, and unknown (not
an error) when the bytes do not say."""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path

import pytest

from core.sessions.content import FileContent, block_from_dict
from core.sessions.file_attachments import load_attachment
from core.sessions.file_facts import audio_seconds, duration_text, pdf_pages
from tests.attachments.samples import MP3_FRAME, id3, pdf_bytes, wav_bytes, write


def test_durations_from_the_headers(tmp_path: Path) -> None:
    assert audio_seconds(wav_bytes(8000 * 65)) == pytest.approx(65.0)
    # 40 frames of 1,152 samples at 44.1 kHz, behind an ID3 tag
    assert audio_seconds(id3(20) + b"\x00" * 20 + MP3_FRAME * 40) == pytest.approx(1.045, 0.01)
    clip = load_attachment(write(tmp_path / "clip.mp3", wav_bytes(8000 * 65))).content
    assert isinstance(clip, FileContent) and clip.seconds == pytest.approx(65.0)
    assert clip.describe() == "clip.mp3, audio/wav, 1.0 MB, 1:05"


@pytest.mark.parametrize(
    "data",
    [
        wav_bytes()[:30],  # a RIFF header cut before its format chunk
        b"RIFF\xff\xff\xff\x7fWAVEfmt " + b"\xff" * 40,  # absurd chunk sizes
        b"OggS" + b"\x00" * 60,  # no codec header
        b"fLaC" + b"\xff" * 60,  # a broken STREAMINFO
        id3(20) + b"\x00" * 20,  # a tag and no frame
        b"\x00" * 100,
    ],
)
def test_unreadable_audio_has_no_duration(data: bytes) -> None:
    assert audio_seconds(data) is None


def test_pages_are_counted_and_the_tree_is_not_a_page() -> None:
    assert pdf_pages(pdf_bytes()) == 1
    three = pdf_bytes() + (
        b"6 0 obj\n<< /Type /Page >>\nendobj\n7 0 obj\n<</Type/Page/Parent 2 0 R>>\nendobj\n"
    )
    assert pdf_pages(three) == 3
    assert pdf_pages(b"%PDF-1.7\n<< /Type /Pages /Count 4 >>\n%%EOF") is None


def test_a_zip_bomb_inside_a_pdf_is_never_inflated(tmp_path: Path) -> None:
    """A stream that inflates to 256 MiB is attached as its quarter megabyte
    of compressed bytes: nothing reads inside it."""
    packer, zeros = zlib.compressobj(9), b"\x00" * 2**20
    bomb = b"".join(packer.compress(zeros) for _ in range(256)) + packer.flush()
    assert len(bomb) < 2**20
    body = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(bomb) + bomb + b"\nendstream"
    data = pdf_bytes().replace(b"%%EOF", b"4 0 obj\n" + body + b"\nendobj\n%%EOF")
    paper = load_attachment(write(tmp_path / "bomb.pdf", data)).content
    assert isinstance(paper, FileContent) and paper.pages == 1
    assert paper.size == len(data)


def test_the_facts_are_kept_in_the_saved_block_and_optional() -> None:
    block = FileContent("application/pdf", "ab" * 32, "paper.pdf", 2048, pages=12)
    saved = json.loads(json.dumps(block.to_dict()))
    assert block_from_dict(saved) == block
    assert block.describe() == "paper.pdf, application/pdf, 0.0 MB, 12 pages"
    old = {"type": "file", "media_type": "audio/wav", "sha256": "cd" * 32, "name": "a", "size": 1}
    assert block_from_dict(old) == FileContent("audio/wav", "cd" * 32, "a", 1)
    assert "seconds" not in block_from_dict(old).to_dict()


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0:00"), (7, "0:07"), (205, "3:25"), (3723, "1:02:03"), (math.inf, "?"), (-1, "?")],
)
def test_duration_text(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text
