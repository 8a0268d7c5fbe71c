"""Small real files of each kind, written by the tests that use them."""

from __future__ import annotations

import io
import wave
from pathlib import Path

from PIL import Image


def wav_bytes(frames: int = 800) -> bytes:
    """A tenth of a second of 8 kHz mono 16-bit silence, written by ``wave``."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\x00\x00" * frames)
    return out.getvalue()


def pdf_bytes(text: str = "Hello") -> bytes:
    """A minimal valid one-page PDF with its cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def png_bytes() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (2, 2), "red").save(out, "PNG")
    return out.getvalue()


MP3_FRAME = b"\xff\xfb\x90\x64" + b"\x00" * 413
"""One MPEG-1 Layer III frame header (128 kbit/s, 44.1 kHz) and its silent body."""


def id3(size: int) -> bytes:
    """An ID3v2.4 header saying its tag is ``size`` bytes long (syncsafe)."""
    syncsafe = bytes((size >> shift) & 0x7F for shift in (21, 14, 7, 0))
    return b"ID3\x04\x00\x00" + syncsafe


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path
