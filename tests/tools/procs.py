"""Helpers to check that processes are gone, and to clean up those that are not."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


def wait_for_pids(pidfile: Path, count: int = 2, timeout: float = 60.0) -> list[int]:
    """The pids a test server wrote to ``pidfile`` (waits until it has)."""
    deadline = time.monotonic() + timeout
    while True:
        if pidfile.exists():
            pids = [int(line) for line in pidfile.read_text().split()]
            if len(pids) >= count:
                return pids
        if time.monotonic() > deadline:
            raise AssertionError(f"{pidfile} was not written within {timeout:g} s")
        time.sleep(0.05)


def still_alive(pids: list[int], within: float) -> list[int]:
    """The pids still running after waiting up to ``within`` seconds for all to end."""
    deadline = time.monotonic() + within
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_quietly(pids: list[int]) -> None:
    """Cleanup for a failed test: SIGKILL what is left."""
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
