"""Append-only JSON Lines files that a sync engine may copy at any moment.

A writer appends whole lines and fsyncs them; a reader takes only lines that
end in a newline, so a line half-copied by a sync engine (or cut by a crash)
is left for the next sync, when the rest of it has arrived.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Lines:
    """What one file held: its complete lines decoded, and how many complete
    lines were not a JSON object (damaged or foreign: skipped)."""

    objects: list[dict[str, Any]]
    skipped: int


def read_lines(path: Path) -> Lines:
    try:
        data = path.read_bytes()
    except OSError:
        return Lines([], 0)
    complete = data[: data.rfind(b"\n") + 1]
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
    return Lines(objects, skipped)


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
