"""Files other than images (audio, PDFs) that an imported file carries as
base64: kept as attachments, their kind from their bytes (never from what the
file says), within the kind's size limit, as attached files are."""

from __future__ import annotations

import re

from core.formats.base import decode_base64
from core.sessions.attachments import Attachment, AttachmentError
from core.sessions.content import FileContent, ImageContent
from core.sessions.file_attachments import imported_blob
from core.sessions.persistence import Blob
from core.sessions.sniff import HEAD_BYTES, sniff

_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[^,;]*)*?;base64,(.*)\Z", re.DOTALL)


def attached(encoded: object, name: str) -> tuple[Blob, ImageContent | FileContent]:
    """The blob and block of base64 bytes named ``name``; ValueError says
    in one line why they cannot be kept."""
    data = decode_base64(encoded)
    if sniff(data[:HEAD_BYTES]) is None:
        raise ValueError(f"{name}: not an image, audio file or PDF, whatever it says it is")
    try:
        blob = imported_blob(data, name)
    except AttachmentError as error:
        raise ValueError(str(error)) from None
    return blob, Attachment(name, blob).content


def attached_data_url(url: str, name: str) -> tuple[Blob, ImageContent | FileContent]:
    """:func:`attached` for a ``data:TYPE;base64,...`` URL."""
    match = _DATA_URL.match(url)
    if not match:
        raise ValueError("the file is not a base64 data URL")
    return attached(match.group(1).strip(), name)
