"""What kind of file a few first bytes are: a media type, or None.

Pure and dependency-free. The name of a file is never consulted: a WAV named
``.mp3`` is a WAV, and text named ``.pdf`` is nothing. :data:`HEAD_BYTES` is
all any rule needs to see.
"""

from __future__ import annotations

HEAD_BYTES = 16

KINDS = ("image", "audio", "pdf")


def sniff(head: bytes) -> str | None:
    """The media type the bytes start as, or None when they are no kind we attach."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio/wav"
    if head.startswith(b"OggS"):
        return "audio/ogg"
    if head.startswith(b"fLaC"):
        return "audio/flac"
    if head[4:8] == b"ftyp" and head[8:12] in (b"M4A ", b"M4B "):
        return "audio/mp4"
    if _id3_header(head) or mpeg_frame_header(head):
        return "audio/mpeg"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    return None


def kind_of(media_type: str) -> str:
    """``image``, ``audio`` or ``pdf``: what a model must be able to take."""
    if media_type == "application/pdf":
        return "pdf"
    return media_type.split("/", 1)[0]


def id3_tag_size(head: bytes) -> int | None:
    """The length of the ID3v2 tag the bytes start with (its 10-byte header
    included), or None when they start with none."""
    if not _id3_header(head):
        return None
    size = 0
    for byte in head[6:10]:
        size = size << 7 | byte
    return 10 + size


def _id3_header(head: bytes) -> bool:
    """``ID3``, a major version 2-4, and four syncsafe size bytes (high bit clear)."""
    return (
        len(head) >= 10
        and head.startswith(b"ID3")
        and head[3] in (2, 3, 4)
        and all(byte < 0x80 for byte in head[6:10])
    )


def mpeg_frame_header(head: bytes) -> bool:
    """An MPEG audio frame header: 11 sync bits, then no reserved version,
    layer, bitrate or sample-rate value."""
    if len(head) < 4 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    version, layer = (head[1] >> 3) & 3, (head[1] >> 1) & 3
    bitrate, rate = head[2] >> 4, (head[2] >> 2) & 3
    return version != 1 and layer != 0 and bitrate != 0xF and rate != 3
