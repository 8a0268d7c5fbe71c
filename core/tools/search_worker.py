"""The matching half of ``search_text``, run as its own process.

Python's ``re`` backtracks: a pattern like ``(a+)+$`` against a line of forty
``a`` and a ``b`` runs for hours and holds the interpreter while it does, so
no deadline or cancellation inside the same process can stop it. Here the
search runs in ``python -I -S search_worker.py`` (standard library only), which
core.tools.builtin kills at the deadline or when the call is cancelled.

Input on stdin, one JSON object: ``parent`` (our pid), ``pattern``, ``ignore_case``, ``files`` (a list
of [path to open, path to show]), ``limit`` (matches), ``max_chars`` (output
size), ``match_chars`` (longest line shown), ``file_bytes`` (larger files are
skipped), ``probe`` (bytes checked for NUL: binary files are skipped).

Output on stdout, JSON lines, flushed as found so a killed search keeps what it
found: ``{"match": "path:line: text", "new_file": bool}`` per match, then
``{"done": "limit" | "all"}``; or ``{"error": "..."}`` for a bad pattern.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys


def _emit(item: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(item) + "\n")
    sys.stdout.flush()


def _text_file(path: str, max_bytes: int, probe: int) -> bool:
    """A regular file (never a FIFO or device, whose open could block), small
    enough, with no NUL in its first ``probe`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once, then is refused
    except OSError:
        return False
    with open(fd, "rb") as handle:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
                return False
            return b"\x00" not in handle.read(probe)
        except OSError:
            return False


def _die_with_parent(parent: int) -> None:
    """On Linux, be SIGKILLed when Tangents dies: a search can spin for hours."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        sys.exit(1)


def main() -> int:
    job = json.load(sys.stdin)
    _die_with_parent(job["parent"])
    try:
        regex = re.compile(job["pattern"], re.IGNORECASE if job["ignore_case"] else 0)
    except (re.error, OverflowError, RecursionError) as error:
        _emit({"error": str(error)})
        return 0
    count = size = 0
    for path, shown in job["files"]:
        if not _text_file(path, job["file_bytes"], job["probe"]):
            continue
        new_file = True
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, 1):
                    if not regex.search(line):
                        continue
                    line = line.rstrip("\n")
                    if len(line) > job["match_chars"]:
                        line = line[: job["match_chars"]] + " [...]"
                    entry = f"{shown}:{number}: {line}"
                    _emit({"match": entry, "new_file": new_file})
                    new_file = False
                    count += 1
                    size += len(entry) + 1
                    if count >= job["limit"] or size > job["max_chars"]:
                        _emit({"done": "limit"})
                        return 0
        except OSError:
            continue
    _emit({"done": "all"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
