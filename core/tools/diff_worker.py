"""The write_file preview's unified diff, computed as its own process.

difflib can take minutes on some inputs (many similar lines), holding the
interpreter; core.tools.builtin runs ``python -I -S diff_worker.py`` through
core.tools.worker and kills it at its deadline. Standard library only.

Input on stdin, one JSON object: ``parent`` (our pid), ``old`` (null for a new
file), ``new``, ``shown`` (the path to name), ``lines`` (most diff lines kept).
Output on stdout: the diff text.
"""

from __future__ import annotations

import difflib
import json
import os
import sys


def unified(old: str | None, new: str, shown: str, limit: int) -> str:
    diff = list(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile="/dev/null" if old is None else f"a/{shown}",
            tofile=f"b/{shown}",
        )
    )
    diff = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff
    ]
    if len(diff) > limit:
        diff = diff[:limit] + [f"[... {len(diff) - limit} more diff lines]\n"]
    return "".join(diff)


def _die_with_parent(parent: int) -> None:
    """On Linux, be SIGKILLed when Tangents dies: a diff can run for minutes."""
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
    diff = unified(job["old"], job["new"], job["shown"], job["lines"])
    sys.stdout.buffer.write(diff.encode("utf-8", errors="replace"))  # lone surrogates too
    return 0


if __name__ == "__main__":
    sys.exit(main())
