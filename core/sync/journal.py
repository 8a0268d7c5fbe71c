"""Append-only JSON Lines files that a sync engine may copy at any moment.

A writer appends whole lines and fsyncs them; a reader takes only lines that
end in a newline, so a line half-copied by a sync engine (or cut by a crash)
is left for the next sync, when the rest of it has arrived.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

_TAIL_BYTES = 4096
"""How much of a journal before a mark is hashed."""

Mark = tuple[int, str]
"""Where a read of a journal stopped (the end of its last complete line) and
the sha256 of up to :data:`_TAIL_BYTES` before it, to tell later whether the
file still holds the same bytes there."""


@dataclass(frozen=True)
class Lines:
    """What one file held: its complete lines decoded, and how many complete
    lines were not a JSON object (damaged or foreign: skipped)."""

    objects: list[dict[str, Any]]
    skipped: int
    mark: Mark | None = None
    """Where the read stopped (None: no such file)."""


def read_lines(path: Path, since: Mark | None = None) -> Lines:
    """The complete lines of ``path``: after ``since`` when the file still
    holds there what ``since`` marked (it only grew), else all of them."""
    try:
        with open(path, "rb") as handle:
            start = since[0] if since is not None and _mark_at(handle, since[0]) == since else 0
            handle.seek(start)
            data = handle.read()
            complete = data[: data.rfind(b"\n") + 1]
            mark = _mark_at(handle, start + len(complete))
    except OSError:
        return Lines([], 0)
    objects: list[dict[str, Any]] = []
    skipped = 0
    for raw in complete.splitlines():
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            skipped += 1
            continue
        if isinstance(value, dict):
            objects.append(value)
        else:
            skipped += 1
    return Lines(objects, skipped, mark)


def last_mark(path: str | Path) -> Mark | None:
    """The mark a read of the whole file now would leave (None: unreadable)."""
    try:
        with open(path, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            while end > 0:
                start = max(0, end - _TAIL_BYTES)
                handle.seek(start)
                chunk = handle.read(end - start)
                newline = chunk.rfind(b"\n")
                if newline >= 0:
                    end = start + newline + 1
                    break
                end = start
            return _mark_at(handle, end)
    except OSError:
        return None


def _mark_at(handle: BinaryIO, end: int) -> Mark:
    start = max(0, end - _TAIL_BYTES)
    handle.seek(start)
    tail = handle.read(end - start)
    if len(tail) != end - start:  # the file is shorter than ``end`` now
        return end, ""
    return end, hashlib.sha256(tail).hexdigest()


def dumps(obj: Mapping[str, Any]) -> str:
    """One journal line (without its newline): compact, UTF-8, never split."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def append_lines(path: Path, objects: Iterable[Mapping[str, Any]]) -> int:
    """Append one line per object and fsync; return how many were written.

    A file left ending without a newline (a write cut short) first gets one,
    so the cut line stays one damaged line instead of spoiling the next."""
    text = "".join(dumps(obj) + "\n" for obj in objects)
    if not text:
        return 0
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            text = "\n" + text
        data = text.encode("utf-8")
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        sync_dir(path.parent)
    return text.count("\n") - text.startswith("\n")


def write_whole(path: Path, data: bytes) -> None:
    """Write a file at once: to a temporary name, fsync'd, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    sync_dir(path.parent)


def sync_dir(path: Path) -> None:
    """Make a new name in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
