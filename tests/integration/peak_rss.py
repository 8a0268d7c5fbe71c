"""``python -m tests.integration.peak_rss OUT COMMAND...`` runs COMMAND and
writes its peak resident size in KiB to OUT.

A test's own ``RUSAGE_CHILDREN`` holds the largest of every child its worker
ever waited for, so another test's big child would be counted; this process
has one child, the one measured."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path


def main() -> int:
    out, *command = sys.argv[1:]
    code = subprocess.call(command)
    Path(out).write_text(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
    return code


if __name__ == "__main__":
    sys.exit(main())
