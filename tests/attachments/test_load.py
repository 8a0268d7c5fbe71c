"""Reading a file to attach: its kind from its bytes, bounded before it is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.sessions.attachments import AttachmentError
from core.sessions.content import FileContent, ImageContent, block_from_dict
from core.sessions.file_attachments import LIMITS, load_attachment
from tests.attachments.samples import MP3_FRAME, id3, pdf_bytes, png_bytes, wav_bytes, write


def test_a_wav_named_mp3_is_a_wav(tmp_path: Path) -> None:
    attachment = load_attachment(write(tmp_path / "clip.mp3", wav_bytes()))
    content = attachment.content
    assert isinstance(content, FileContent)
    assert (content.media_type, content.name) == ("audio/wav", "clip.mp3")
    assert content.size == len(wav_bytes())
    assert attachment.blob.data == wav_bytes()
    assert "clip.mp3" in attachment.label and "audio/wav" in attachment.label


def test_a_pdf_and_an_mp3_and_an_image(tmp_path: Path) -> None:
    pdf = load_attachment(write(tmp_path / "paper", pdf_bytes())).content
    assert isinstance(pdf, FileContent) and pdf.media_type == "application/pdf"
    mp3 = load_attachment(write(tmp_path / "a.mp3", id3(20) + b"\x00" * 20 + MP3_FRAME)).content
    assert isinstance(mp3, FileContent) and mp3.media_type == "audio/mpeg"
    image = load_attachment(write(tmp_path / "dot.png", png_bytes())).content
    assert isinstance(image, ImageContent) and image.media_type == "image/png"


def test_file_content_round_trips() -> None:
    block = FileContent(media_type="audio/wav", sha256="ab" * 32, name="clip.wav", size=1234)
    assert block_from_dict(block.to_dict()) == block


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("paper.pdf", b"just some text, not a PDF", "not an image, audio file or PDF"),
        ("cut.wav", b"RIFF\x24\x00", "not an image, audio file or PDF"),
        ("cut.pdf", b"%PDF-1.4\n1 0 obj\n<<", "truncated"),
        ("empty.mp3", b"", "empty"),
        ("tagged.mp3", id3(100 * 1024 * 1024) + b"\x00" * 64, "truncated"),
    ],
)
def test_bad_files_are_refused_with_one_line_naming_them(
    tmp_path: Path, name: str, data: bytes, reason: str
) -> None:
    with pytest.raises(AttachmentError) as caught:
        load_attachment(write(tmp_path / name, data))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{name}: ") and reason in message


@pytest.mark.parametrize(
    ("name", "head", "size"),
    [
        ("huge.wav", wav_bytes()[:44], 2 * 1024**3),
        ("huge.pdf", pdf_bytes()[:16], LIMITS["pdf"] + 1),
        ("tag.mp3", id3(100 * 1024 * 1024), 100 * 1024 * 1024 + 4096),
    ],
)
def test_sparse_giants_are_refused_by_their_size_alone(
    tmp_path: Path, name: str, head: bytes, size: int
) -> None:
    path = write(tmp_path / name, head)
    os.truncate(path, size)  # sparse: costs no disk, and must cost no reading
    with pytest.raises(AttachmentError, match=f"^{name}: .*too large"):
        load_attachment(path)


def test_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError, match="not a file"):
        load_attachment(tmp_path)
    with pytest.raises(AttachmentError, match="no such file"):
        load_attachment(tmp_path / "missing.wav")
    fifo = tmp_path / "pipe.wav"
    os.mkfifo(fifo)
    with pytest.raises(AttachmentError, match="not a file"):
        load_attachment(fifo)
