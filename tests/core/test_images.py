"""Image bytes are decoded (within bounds) before they are trusted: a PNG
whose pixel data is cut short is refused even when every chunk checksum holds."""

from __future__ import annotations

import io
import random
import struct
import zlib

import pytest
from PIL import Image

from core.sessions.images import ImageError, image_blob


def png(width: int = 64, height: int = 64) -> bytes:
    rng = random.Random(7)
    image = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    found, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        found.append((data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]))
        pos += 12 + length
    return found


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def with_pixels_cut_short(data: bytes) -> bytes:
    """The same PNG with half its compressed pixel data: valid chunks, valid
    checksums, an IEND, so ``verify()`` passes; the pixels stop half-way."""
    parts = chunks(data)
    pixels = b"".join(body for kind, body in parts if kind == b"IDAT")
    header = b"".join(chunk(kind, body) for kind, body in parts if kind == b"IHDR")
    return data[:8] + header + chunk(b"IDAT", pixels[: len(pixels) // 2]) + chunk(b"IEND", b"")


def test_a_whole_png_is_accepted() -> None:
    blob = image_blob(png())
    assert (blob.media_type, blob.width, blob.height) == ("image/png", 64, 64)


def test_a_png_with_its_pixel_data_cut_short_is_refused() -> None:
    broken = with_pixels_cut_short(png())
    Image.open(io.BytesIO(broken)).verify()  # what was trusted before
    with pytest.raises(ImageError, match="shot.png: not a readable"):
        image_blob(broken, "shot.png")
