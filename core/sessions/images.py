"""Image bytes checked within fixed bounds and turned into blobs.

Attachments, tool results and imported files all go through :func:`image_blob`.
The header is read first (format, size) and checked against the bounds, then
the pixels are decoded: ``verify()`` alone checks chunk checksums but never
decompresses, so a PNG with truncated pixel data would pass and be sent to a
provider. A hostile file costs at most :data:`MAX_BYTES` read and
:data:`MAX_PIXELS` decoded. PIL is imported on first use, never at start-up.
"""

from __future__ import annotations

import hashlib
import io

from core.sessions.content import ImageContent
from core.sessions.persistence import Blob

MAX_BYTES = 20 * 1024 * 1024
MAX_PIXELS = 50_000_000
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class ImageError(ValueError):
    """The bytes are not a usable image; the message says why, naming the image."""


def looks_like_image(head: bytes) -> bool:
    """Magic bytes of the formats providers accept (PNG, JPEG, GIF, WebP)."""
    return (
        head.startswith(b"\x89PNG\r\n\x1a\n")
        or head.startswith(b"\xff\xd8\xff")
        or head.startswith((b"GIF87a", b"GIF89a"))
        or (head.startswith(b"RIFF") and head[8:12] == b"WEBP")
    )


def too_large(name: str, size: int) -> ImageError:
    return ImageError(
        f"{name}: image too large ({size / 1048576:.1f} MB; the limit is {MAX_BYTES // 1048576} MB)"
    )


def image_blob(data: bytes, name: str = "image") -> Blob:
    """Check image bytes and make their blob; :class:`ImageError` when they are unusable."""
    if len(data) > MAX_BYTES:
        raise too_large(name, len(data))
    from PIL import Image

    not_image = ImageError(f"{name}: not a readable PNG, JPEG, GIF or WebP image")
    try:
        with Image.open(io.BytesIO(data)) as image:
            media_type = MEDIA_TYPES.get(image.format or "")
            width, height = image.size
            if media_type is None:
                raise not_image
            if width * height > MAX_PIXELS:
                raise ImageError(
                    f"{name}: too many pixels ({width}×{height}; the limit is 50 megapixels)"
                )
            image.verify()
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except ImageError:
        raise
    except Image.DecompressionBombError:
        raise ImageError(f"{name}: too many pixels (the limit is 50 megapixels)") from None
    except Exception:  # PIL raises many types (OSError, SyntaxError, ValueError...) for bad files
        raise not_image from None
    return Blob(hashlib.sha256(data).hexdigest(), media_type, width, height, data)


def image_content(blob: Blob) -> ImageContent:
    return ImageContent(
        media_type=blob.media_type, sha256=blob.sha256, width=blob.width, height=blob.height
    )
