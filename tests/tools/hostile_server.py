"""MCP servers that misbehave, for the hardening tests.

``python hostile_server.py MODE PIDFILE [MB]``: writes its own pid and the pid
of a grandchild it starts in a session of its own (``setsid``, as a daemon
would) to PIDFILE, one per line, then

* ``hang``: never answers (sleeps, ignoring stdin);
* ``flood``: writes MB megabytes of garbage lines to stdout, then hangs;
* ``flood-then-serve``: writes MB megabytes of garbage lines, then serves the
  echo server's tools (tests/tools/mcp_echo_server.py) properly;
* ``long-line-then-serve``: writes one line of MB megabytes, then serves;
* ``serve``: serves the echo server's tools.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

GARBAGE_LINE = b"this is not json-rpc " * 50 + b"\n"  # about 1 kB


def garbage_lines(megabytes: float) -> int:
    return int(megabytes * 1024 * 1024) // len(GARBAGE_LINE)


def main() -> None:
    mode, pidfile = sys.argv[1], sys.argv[2]
    grandchild = subprocess.Popen(
        ["sleep", "9999"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    with open(pidfile + ".tmp", "w") as handle:
        handle.write(f"{os.getpid()}\n{grandchild.pid}\n")
    os.replace(pidfile + ".tmp", pidfile)
    if mode.startswith("flood"):
        out = sys.stdout.buffer
        for _ in range(garbage_lines(float(sys.argv[3]))):
            out.write(GARBAGE_LINE)
        out.flush()
    if mode == "long-line-then-serve":
        sys.stdout.buffer.write(b"x" * int(float(sys.argv[3]) * 1024 * 1024) + b"\n")
        sys.stdout.flush()
    if mode in ("hang", "flood"):
        while True:
            time.sleep(3600)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mcp_echo_server import server

    server.run("stdio")


if __name__ == "__main__":
    main()
