"""Attaching files to a message: recognise a pasted path, read and check
the file within fixed bounds, and turn it into a blob.

The bounds and the probing are :mod:`core.sessions.images`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote, urlparse

from core.sessions.content import FileContent, ImageContent
from core.sessions.file_facts import audio_seconds, pdf_pages
from core.sessions.images import image_content
from core.sessions.persistence import Blob

PASTED_SUFFIXES = (
    *(".png", ".jpg", ".jpeg", ".gif", ".webp"),
    *(".mp3", ".wav", ".ogg", ".oga", ".opus", ".flac", ".m4a"),
    ".pdf",
)
"""What a pasted path must end with to be taken as a file to attach rather
than text (what is in the file then decides its kind)."""


class AttachmentError(Exception):
    """The file cannot be attached; the message says why, naming the file."""


@dataclass(frozen=True)
class Attachment:
    name: str
    blob: Blob

    @cached_property
    def content(self) -> ImageContent | FileContent:
        """The block the message holds; an audio file's duration and a PDF's
        page count are read from its bytes once."""
        blob = self.blob
        if blob.media_type.startswith("image/"):
            return image_content(blob)
        audio = blob.media_type.startswith("audio/")
        return FileContent(
            blob.media_type,
            blob.sha256,
            self.name,
            len(blob.data),
            seconds=audio_seconds(blob.data) if audio else None,
            pages=pdf_pages(blob.data) if blob.media_type == "application/pdf" else None,
        )

    @property
    def label(self) -> str:
        content = self.content
        if isinstance(content, FileContent):
            return f"{self.name} ({content.describe().removeprefix(self.name + ', ')})"
        return f"{self.name} ({self.blob.media_type} {self.blob.width}×{self.blob.height})"


def pasted_file_path(text: str) -> Path | None:
    """The existing image, audio file or PDF a paste names (as terminals paste dropped files:
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
    if path.suffix.lower() not in PASTED_SUFFIXES:
        return None
    try:
        return path if path.is_file() else None
    except OSError:
        return None
