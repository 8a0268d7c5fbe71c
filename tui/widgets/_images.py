"""Bounded image decoding for display.

Image bytes come from the blob table (pasted by the user, returned by a tool,
sent by a model): they are untrusted. Decoding is bounded in bytes and pixels
before any pixel data is read, and every failure becomes a one-line note, never
an exception. Pure Python + Pillow (no Textual); call it in a thread.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, replace

from PIL import Image, UnidentifiedImageError

from tui.widgets._text import clean, human_size

MAX_BYTES = 20 * 1024 * 1024
"""Larger blobs are not decoded."""
MAX_PIXELS = 40_000_000
"""Images with more pixels (width x height from the header) are not decoded."""
DISPLAY_MAX = (1200, 1200)
"""Decoded images are shrunk to fit this box: a terminal never shows more."""


@dataclass(frozen=True)
class DecodedImage:
    """A decoded image ready to show, or the note to show instead."""

    media_type: str
    size_bytes: int
    width: int = 0
    """Width in pixels of the original image (0 when unknown)."""
    height: int = 0
    image: Image.Image | None = None
    """The (shrunk) image, or ``None`` when it cannot be shown."""
    note: str | None = None
    """Why the image cannot be shown."""

    @property
    def caption(self) -> str:
        """``image/png 800×600 · 12 KB``."""
        dims = f" {self.width}×{self.height}" if self.width and self.height else ""
        return f"{self.media_type}{dims} · {human_size(self.size_bytes)}"


def decode_image(data: bytes, media_type: str = "image") -> DecodedImage:
    """Decode ``data`` for display, within :data:`MAX_BYTES` and :data:`MAX_PIXELS`."""
    media_type = clean(media_type)[:80] or "image"
    size = len(data)
    result = DecodedImage(media_type=media_type, size_bytes=size)
    if size == 0:
        return _with(result, note="image is empty")
    if size > MAX_BYTES:
        return _with(
            result,
            note=f"image too large to show ({human_size(size)}, limit {human_size(MAX_BYTES)})",
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as opened:
                width, height = opened.size
                result = _with(result, width=width, height=height)
                if width <= 0 or height <= 0:
                    return _with(result, note="image has no pixels")
                if width * height > MAX_PIXELS:
                    return _with(result, note=f"image too large to show ({width}×{height} pixels)")
                # JPEG can decode at a reduced scale directly.
                opened.draft("RGB", DISPLAY_MAX)
                opened.load()
                image = opened.convert("RGBA" if _has_alpha(opened) else "RGB")
        image.thumbnail(DISPLAY_MAX)
    except UnidentifiedImageError:
        return _with(result, note="not a readable image")
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        return _with(result, note="image too large to show (decompression limit)")
    except (OSError, SyntaxError, ValueError, EOFError, IndexError, TypeError) as error:
        reason = "truncated" if "truncated" in str(error).lower() else "damaged"
        return _with(result, note=f"image is {reason} and cannot be shown")
    except MemoryError:
        return _with(result, note="image too large to show (out of memory)")
    return _with(result, image=image)


def _has_alpha(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or (
        image.mode == "P" and "transparency" in image.info
    )


def _with(result: DecodedImage, **changes: object) -> DecodedImage:
    return replace(result, **changes)  # type: ignore[arg-type]
