"""Attaching any file a model may take (image, audio, PDF): its kind comes
from its first bytes (:mod:`core.sessions.sniff`), and each kind has a size limit,
checked on the open file's size before its body is read.

A FIFO or device is refused without being read (opened non-blocking, then
checked), a sparse 2 GB file by its size alone, a file that grows while read
is read no further than its limit.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from core.sessions.attachments import Attachment, AttachmentError
from core.sessions.images import MAX_BYTES, ImageError, image_blob, too_large
from core.sessions.persistence import Blob
from core.sessions.sniff import HEAD_BYTES, id3_tag_size, kind_of, sniff

MB = 1024 * 1024
LIMITS = {"image": MAX_BYTES, "audio": 25 * MB, "pdf": 32 * MB}


def load_attachment(path: Path) -> Attachment:
    """Read and check a file to attach. Blocking: run it in a thread."""
    name = path.name or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise AttachmentError(f"{name}: no such file") from None
    except OSError as error:
        raise AttachmentError(f"{name}: cannot read it ({error.strerror or error})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise AttachmentError(f"{name}: not a file")
        file = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    try:
        with file:
            if info.st_size == 0:
                raise AttachmentError(f"{name}: the file is empty")
            head = file.read(HEAD_BYTES)
            media_type = sniff(head)
            if media_type is None:
                raise AttachmentError(
                    f"{name}: not an image, audio file or PDF (PNG, JPEG, GIF, WebP, "
                    "MP3, WAV, Ogg, FLAC, M4A, PDF), whatever its name says"
                )
            kind = kind_of(media_type)
            limit = LIMITS[kind]
            if info.st_size > limit:
                raise _too_large(name, kind, info.st_size)
            data = head + file.read(limit + 1 - len(head))
    except OSError as error:
        raise AttachmentError(f"{name}: cannot read it ({error.strerror or error})") from None
    if len(data) > limit:
        raise _too_large(name, kind, len(data))
    if kind == "image":
        try:
            return Attachment(name, image_blob(data, name))
        except ImageError as error:
            raise AttachmentError(str(error)) from None
    return Attachment(name, file_blob(data, name, media_type))


def imported_blob(data: bytes, name: str = "the data") -> Blob:
    """The blob of bytes read from an imported file: an image checked as
    attached images are, audio or a PDF within its kind's limit."""
    media_type = sniff(data[:HEAD_BYTES])
    if media_type is None or kind_of(media_type) == "image":
        return image_blob(data, name)
    kind = kind_of(media_type)
    if len(data) > LIMITS[kind]:
        raise _too_large(name, kind, len(data))
    return file_blob(data, name, media_type)


def file_blob(data: bytes, name: str, media_type: str) -> Blob:
    """The blob of audio or PDF bytes whose type :func:`core.sessions.sniff.sniff` found,
    refusing what is plainly cut short."""
    tag = id3_tag_size(data[:HEAD_BYTES])
    if tag is not None and tag >= len(data):
        raise AttachmentError(
            f"{name}: truncated (its ID3 tag says {tag / MB:.1f} MB; the file is {len(data) / MB:.1f} MB)"
        )
    if media_type == "application/pdf" and b"%%EOF" not in data[-1024:]:
        raise AttachmentError(f"{name}: truncated (a PDF ends with %%EOF; this one does not)")
    return Blob(hashlib.sha256(data).hexdigest(), media_type, 0, 0, data)


def _too_large(name: str, kind: str, size: int) -> AttachmentError:
    if kind == "image":
        return AttachmentError(str(too_large(name, size)))
    return AttachmentError(
        f"{name}: {kind} file too large ({size / MB:.1f} MB; the limit is {LIMITS[kind] // MB} MB)"
    )
