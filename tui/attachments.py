"""Attaching image files to a message: recognise a pasted path, read and check
the file within fixed bounds, and turn it into a blob.

Only the header is decoded (size, format) and the file is verified, never
fully decompressed, so a hostile file costs at most the 20 MB it may weigh.
PIL is imported on first use, never at start-up.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from core.content import ImageContent
from core.store import Blob

MAX_BYTES = 20 * 1024 * 1024
MAX_PIXELS = 50_000_000
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


class AttachmentError(Exception):
    """The file cannot be attached; the message says why, naming the file."""


@dataclass(frozen=True)
class Attachment:
    name: str
    blob: Blob

    @property
    def content(self) -> ImageContent:
        b = self.blob
        return ImageContent(media_type=b.media_type, sha256=b.sha256, width=b.width, height=b.height)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.blob.media_type} {self.blob.width}×{self.blob.height})"


def pasted_image_path(text: str) -> Path | None:
    """The existing image file a paste names (as terminals paste dropped files:
    quoted, ``file://`` URLs, backslash-escaped spaces), or None."""
    text = text.strip()
    if not text or "\n" in text or len(text) > 4096:
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if text.startswith("file://"):
        text = unquote(urlparse(text).path)
    text = text.replace("\\ ", " ")
    path = Path(text).expanduser()
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        return None
    try:
        return path if path.is_file() else None
    except OSError:
        return None


def load_image(path: Path) -> Attachment:
    """Read and check an image file. Blocking: run it in a thread."""
    name = path.name or str(path)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise AttachmentError(f"{name}: not a file")
        if size > MAX_BYTES:
            raise AttachmentError(f"{name}: too large ({size / 1048576:.1f} MB; the limit is 20 MB)")
        data = path.read_bytes()
    except FileNotFoundError:
        raise AttachmentError(f"{name}: no such file") from None
    except OSError as error:
        raise AttachmentError(f"{name}: cannot read it ({error.strerror or error})") from None
    media_type, width, height = _probe(name, data)
    blob = Blob(hashlib.sha256(data).hexdigest(), media_type, width, height, data)
    return Attachment(name, blob)


def _probe(name: str, data: bytes) -> tuple[str, int, int]:
    from PIL import Image

    not_image = AttachmentError(f"{name}: not an image Tangents can send (PNG, JPEG, GIF or WebP)")
    try:
        with Image.open(io.BytesIO(data)) as image:
            media_type = MEDIA_TYPES.get(image.format or "")
            width, height = image.size
            if media_type is None:
                raise not_image
            if width * height > MAX_PIXELS:
                raise AttachmentError(f"{name}: too many pixels ({width}×{height}; the limit is 50 megapixels)")
            image.verify()
    except AttachmentError:
        raise
    except Image.DecompressionBombError:
        raise AttachmentError(f"{name}: too many pixels (the limit is 50 megapixels)") from None
    except Exception:  # PIL raises many types (OSError, SyntaxError, ValueError...) for bad files
        raise not_image from None
    return media_type, width, height
