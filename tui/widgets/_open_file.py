"""Opening an attached file with the system's opener: its bytes written to a
private temporary file (the opener, and the viewer it starts, read it later,
so it stays for the system to clean), then the opener run on it.

Blocking: run it in a thread."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

SUFFIXES = {
    "audio/wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/ogg": ".ogg",
    "audio/flac": ".flac",
    "audio/mp4": ".m4a",
    "application/pdf": ".pdf",
}
"""The suffix a viewer knows each sniffed type by (core.sessions.sniff's types)."""

OPENER_SECONDS = 30.0
"""How long an opener may take to hand the file over (xdg-open returns at once)."""


class OpenError(Exception):
    """The file could not be opened; the message says why in one line."""


def default_opener() -> str:
    return "open" if sys.platform == "darwin" else "xdg-open"


def open_file(data: bytes, name: str, media_type: str, opener: str | None) -> Path:
    """Write ``data`` as ``name`` (its directory parts dropped) and run
    ``opener`` on it; the path written. :class:`OpenError` on failure."""
    try:
        command = shlex.split(opener or default_opener())
    except ValueError as error:
        raise OpenError(f"the opener command does not parse ({error})") from None
    if not command:
        raise OpenError("the opener command is empty")
    path = Path(tempfile.mkdtemp(prefix="tangents-open-")) / _safe_name(name, media_type)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    try:
        finished = subprocess.run(
            [*command, str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            timeout=OPENER_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        raise OpenError(f"no {command[0]} here: set opener in the config") from None
    except subprocess.TimeoutExpired:
        raise OpenError(f"{command[0]} did not finish in {OPENER_SECONDS:.0f} s") from None
    except OSError as error:
        raise OpenError(f"{command[0]}: {error.strerror or error}") from None
    if finished.returncode != 0:
        raise OpenError(f"{command[0]} exited with status {finished.returncode}")
    return path


def _safe_name(name: str, media_type: str) -> str:
    """The file's own name without directories or control characters, with
    the suffix its type has when it has none."""
    base = "".join(c for c in Path(name.replace("\\", "/")).name if c.isprintable()).strip()
    base = base.lstrip(".") or "attachment"
    if not Path(base).suffix:
        base += SUFFIXES.get(media_type, "")
    return base[:200]
