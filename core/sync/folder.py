"""Where each device's files live in the sync folder.

``DIR/tangents/<device>/entries.jsonl`` (sessions and entries),
``registers.jsonl`` (title, archive, status, labels, leaf, deletions) and
``blobs/<sha256>.json`` (one image each); ``DIR/tangents/sealed.json`` when
the folder is encrypted (see :mod:`core.sync.seal`). A device writes only under its own
name. Sync-engine debris beside a journal (``entries (conflicted copy).jsonl``,
``entries.sync-conflict-….jsonl``, ``entries-laptop.jsonl``, a ``.tmp``) is read
as more lines of that device's journal: the union makes duplicates free.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from core.sessions.persistence import Blob
from core.sync.journal import dumps, write_whole

if TYPE_CHECKING:
    from core.sync.seal import Seal  # cryptography: loaded only by a sync

ROOT = "tangents"
MARKER = "sealed.json"
ENTRIES = "entries"
REGISTERS = "registers"
BLOBS = "blobs"


def marker(folder: Path) -> Path:
    return folder / ROOT / MARKER


def device_dir(folder: Path, device: str) -> Path:
    return folder / ROOT / device


def own_journal(folder: Path, device: str, kind: str) -> Path:
    return device_dir(folder, device) / f"{kind}.jsonl"


def devices(folder: Path, own: str) -> list[str]:
    """Every device that wrote to the folder, this one first, then by name."""
    try:
        names = sorted(p.name for p in (folder / ROOT).iterdir() if p.is_dir())
    except OSError:
        names = []
    return [own, *(name for name in names if name != own and not name.startswith("."))]


def journal_files(folder: Path, device: str, kind: str) -> list[Path]:
    """The device's journal of ``kind`` and every copy of it a sync engine left."""
    own = own_journal(folder, device, kind)
    try:
        others = sorted(
            p
            for p in device_dir(folder, device).iterdir()
            if kind in p.name and p != own and p.is_file()
        )
    except OSError:
        others = []
    return [own, *others]


def blob_path(folder: Path, device: str, name: str) -> Path:
    """Where ``device`` keeps the image ``name`` (see :meth:`Seal.blob_name`)."""
    return device_dir(folder, device) / BLOBS / f"{name}.json"


def write_blob(folder: Path, device: str, blob: Blob, seal: Seal) -> None:
    document = {
        "sha256": blob.sha256,
        "media_type": blob.media_type,
        "width": blob.width,
        "height": blob.height,
        "data": base64.b64encode(blob.data).decode("ascii"),
    }
    line = dumps(seal.close(document, device, BLOBS)) + "\n"
    write_whole(blob_path(folder, device, seal.blob_name(blob.sha256)), line.encode())


def read_blob(folder: Path, device_names: list[str], sha256: str, seal: Seal) -> Blob | None:
    """The blob from whichever device has a whole copy (its bytes match the hash)."""
    for device in device_names:
        try:
            path = blob_path(folder, device, seal.blob_name(sha256))
            document = seal.open(json.loads(path.read_bytes()), device, BLOBS)
            if document is None:
                continue
            data = base64.b64decode(document["data"], validate=True)
            blob = Blob(
                sha256,
                str(document["media_type"]),
                int(document["width"]),
                int(document["height"]),
                data,
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if hashlib.sha256(data).hexdigest() == sha256:
            return blob
    return None
