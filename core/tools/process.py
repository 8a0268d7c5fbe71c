"""Run a shell command for ``run_command``: own process group, timeout, capped output.

The command runs as ``/bin/sh -c COMMAND`` under the supervisor
(core/tools/supervisor.py) in a new session (so a new process group), stdin
from /dev/null, stdout and stderr together, with the environment filtered by
core.tools.env. On timeout or cancellation the whole group gets SIGTERM (and
SIGCONT, for a supervisor stopped with SIGSTOP), then after a short grace
SIGKILL for the supervisor's whole tree, found through /proc, and its group;
the supervisor also ends what left the group (``setsid``, double forks) and
ends everything if Tangents itself dies. When
the shell exits normally, whatever it left running is killed too: a tool call
never leaves processes behind (and a leftover child holding the pipe cannot
hang the call).

Every process group started here (commands and MCP servers) is recorded until
it ends, so :func:`kill_all` can end them all synchronously at exit
(registered with :mod:`atexit`).

Output beyond the cap is dropped from the middle: the first and last halves are
kept, where a command's summary and its errors usually are.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.tools.env import EnvPolicy
from core.tools.supervisor import descendants

KILL_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL for the process group: room for the
supervisor's own grace (0.5 s) and its sweep of what left the group."""
_POLL = 0.02
_DRAIN = 1.0
"""Seconds to read what is left in the pipe once the group is dead."""
SUPERVISOR = str(Path(__file__).with_name("supervisor.py"))
_live_groups: set[int] = set()
_PR_SET_DUMPABLE = 4


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int | None
    """None when killed (timeout)."""
    output: str
    timed_out: bool
    omitted_bytes: int
    elapsed: float


class _Capped:
    """Keeps the first and last ``cap // 2`` bytes of a stream."""

    def __init__(self, cap: int) -> None:
        self.half = max(1, cap // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> tuple[str, int]:
        tail = bytes(self.tail[-self.half :]) if self.tail else b""
        omitted = self.total - len(self.head) - len(tail)
        head_text = self.head.decode("utf-8", errors="replace")
        if not omitted:
            return head_text + tail.decode("utf-8", errors="replace"), 0
        tail_text = tail.decode("utf-8", errors="replace")
        return f"{head_text}\n[... {omitted} bytes of output omitted ...]\n{tail_text}", omitted


@lru_cache(maxsize=1)
def protect_environ() -> None:
    """On Linux, make this process non-dumpable (as ssh-agent does): its
    /proc/PID/environ, which holds every key, is then unreadable to the
    commands and servers it starts although they run as the same user.
    (It also means no core dumps and no debugger attaching without root.)"""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        except (OSError, AttributeError):
            pass


def supervised(argv: list[str]) -> list[str]:
    """``argv`` run under the supervisor (start it with ``start_new_session=True``).
    Calls :func:`protect_environ` first: whatever runs next must not read ours."""
    protect_environ()
    return [sys.executable, "-I", "-S", SUPERVISOR, "--parent", str(os.getpid()), "--", *argv]


def track(pgid: int) -> None:
    """Remember a process group we started, for :func:`kill_all`."""
    _live_groups.add(pgid)


def untrack(pgid: int) -> None:
    _live_groups.discard(pgid)


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


@atexit.register
def kill_all() -> None:
    """End every process group still running: SIGTERM and SIGCONT (each
    supervisor then ends its whole tree, what left the group included), SIGKILL for what is
    left after a second. Synchronous: safe at exit, with no event loop."""
    groups = list(_live_groups)
    for pgid in groups:
        stop_group(pgid)
    deadline = time.monotonic() + 1.0
    while groups and time.monotonic() < deadline:
        groups = [g for g in groups if _group_alive(g)]
        time.sleep(0.02)
    for pgid in groups:
        kill_group(pgid, signal.SIGKILL)
    _live_groups.clear()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def stop_group(pgid: int) -> None:
    """SIGTERM the group, then SIGCONT: a supervisor stopped with SIGSTOP
    resumes and ends its whole tree itself."""
    kill_group(pgid, signal.SIGTERM)
    kill_group(pgid, signal.SIGCONT)


def kill_tree(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the supervisor ``process`` started, everything below it (the
    orphans it adopted too) and its group: nothing is left even when the
    supervisor cannot sweep (stopped again, or hung). Only while it is our
    unreaped child, so its pid cannot belong to another process yet."""
    if process.returncode is None:
        for _ in range(50):  # a killed parent's children are re-parented to it: repeat
            found = descendants(process.pid)
            for pid in found:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if not found:
                break
    kill_group(process.pid, signal.SIGKILL)


async def _end_group(process: asyncio.subprocess.Process, pgid: int) -> None:
    """Stop the group, wait a little for the shell, then kill the whole tree."""
    stop_group(pgid)
    deadline = time.monotonic() + KILL_GRACE
    while process.returncode is None and time.monotonic() < deadline:
        await asyncio.sleep(_POLL)
    kill_tree(process)
    while process.returncode is None:
        await asyncio.sleep(_POLL)


def close_transport(process: asyncio.subprocess.Process) -> None:
    """Close the subprocess transport now: left to the garbage collector, it
    would be closed after the event loop is (``Event loop is closed`` at exit)."""
    transport = getattr(process, "_transport", None)
    if transport is not None:
        try:
            transport.close()
        except (ProcessLookupError, PermissionError):
            pass


async def run_process(
    command: str, *, cwd: str, timeout: float, cap: int, env: EnvPolicy | None = None
) -> ProcessResult:
    """Run ``command``; cancellation kills the process group, then re-raises."""
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *supervised(["/bin/sh", "-c", command]),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=cwd,
        env=(env or EnvPolicy()).environment(),
        start_new_session=True,
    )
    pgid = process.pid  # the leader of its own new session and group
    track(pgid)
    captured = _Capped(cap)
    assert process.stdout is not None

    async def read() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            captured.add(chunk)

    reader = asyncio.create_task(read())
    timed_out = False
    try:
        # Not process.wait(): on 3.11 it also waits for the pipe to close, which
        # a background child holding stdout would delay until it exits.
        deadline = started + timeout
        while process.returncode is None:
            if time.monotonic() >= deadline:
                timed_out = True
                await _end_group(process, pgid)
                break
            await asyncio.sleep(_POLL)
        kill_group(pgid)  # anything the shell left running in its group
        try:
            await asyncio.wait_for(asyncio.shield(reader), _DRAIN)
        except TimeoutError:
            reader.cancel()
    except asyncio.CancelledError:
        await asyncio.shield(_end_group(process, pgid))
        reader.cancel()
        raise
    finally:
        if not reader.done():
            reader.cancel()
        untrack(pgid)
        close_transport(process)
    output, omitted = captured.text()
    return ProcessResult(
        exit_code=None if timed_out else process.returncode,
        output=output,
        timed_out=timed_out,
        omitted_bytes=omitted,
        elapsed=time.monotonic() - started,
    )
