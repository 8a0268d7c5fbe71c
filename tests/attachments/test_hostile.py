"""Hostile files beyond those refused by size or a cut header (test_load.py):
a big ID3 tag within the limit, containers whose sizes lie, and the same
files pasted in the app, where a refusal is one line and the paste comes back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.sessions.content import FileContent
from core.sessions.file_attachments import load_attachment
from core.sessions.file_facts import audio_seconds
from tests.attachments.samples import MP3_FRAME, id3, wav_bytes, write
from tests.tui.helpers import notifications, running
from tests.tui.test_attachments import paste, prompt_text

MB = 1024 * 1024


def test_an_mp3_behind_a_20_mb_id3_tag_is_attached_with_its_duration(tmp_path: Path) -> None:
    """The tag is skipped by its stated size, not read through."""
    data = id3(20 * MB) + b"\x00" * (20 * MB) + MP3_FRAME * 40
    clip = load_attachment(write(tmp_path / "tagged.mp3", data)).content
    assert isinstance(clip, FileContent) and clip.media_type == "audio/mpeg"
    assert clip.seconds == pytest.approx(1.045, 0.01)


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00" + b"\xff\xff\xff\xffmoov" + b"\x00" * 64,
        b"RIFF\x24\x00\x00\x00WAVEdata\xff\xff\xff\x7f" + b"\x00" * 64,  # data before fmt
        b"OggS\x00\x02" + b"\xff" * 64,
        b"fLaC\x00\xff\xff\xff" + b"\x00" * 64,  # a STREAMINFO block of 16 MB, 64 bytes given
    ],
)
def test_containers_whose_sizes_lie_have_no_duration(data: bytes) -> None:
    assert audio_seconds(data) is None


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        (
            "huge.wav",
            lambda p: (p.write_bytes(wav_bytes()[:44]), os.truncate(p, 2 * 1024**3)),
            "too large",
        ),
        ("tag.mp3", lambda p: p.write_bytes(id3(100 * MB) + b"\x00" * 64), "truncated"),
        (
            "paper.pdf",
            lambda p: p.write_bytes(b"just text named like a PDF"),
            "not an image, audio file or PDF",
        ),
        ("cut.pdf", lambda p: p.write_bytes(b"%PDF-1.7\n1 0 obj\n<<"), "truncated"),
    ],
)
async def test_a_hostile_pasted_file_is_one_line_and_the_paste_comes_back(
    tmp_path: Path, name: str, make, reason: str
) -> None:
    path = tmp_path / name
    make(path)
    async with running() as pilot:
        await paste(pilot, str(path))
        [note] = [n for n in notifications(pilot) if n.startswith("Not attached")]
        assert note.startswith(f"Not attached: {name}: ") and reason in note
        assert "\n" not in note
        assert prompt_text(pilot) == str(path)
        assert pilot.app.screen.composer.attachments == []
