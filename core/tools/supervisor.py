"""Run one command so that nothing it starts outlives it, or outlives Tangents.

``python -I -S supervisor.py --parent PID -- COMMAND [ARG...]`` (see
:func:`core.tools.process.supervised`). Standard library only: it runs as a
script, not as part of the ``core`` package, and starts in a few milliseconds.

Tangents starts it in a new session (so a new process group). It forks the
command into that group and waits. On Linux it first makes itself

* a *child subreaper* (``PR_SET_CHILD_SUBREAPER``): any process the command
  starts, including ones that leave the group with ``setsid`` or daemonize by
  double-forking, becomes its child when its own parent exits, instead of
  going to init;
* the receiver of a *parent-death signal* (``PR_SET_PDEATHSIG``): when
  Tangents dies, even by SIGKILL, the kernel sends it SIGTERM.

When the command exits, every process left (its descendants, found through
/proc, and orphans re-parented here) is killed at once. On SIGTERM, SIGINT or
SIGHUP (Tangents stopping the command, or Tangents gone) they get SIGTERM, then
SIGKILL after a short grace. Then it exits as the command did (same code, or
the same signal), so for the caller it looks like the command itself.

Elsewhere (no prctl, no /proc) it falls back to SIGTERM for its process
group; Tangents SIGKILLs the group when it has exited.
"""

from __future__ import annotations

import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE = 0.5
"""Seconds between SIGTERM and SIGKILL when stopped."""
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (Linux /proc; zombies left out, as
    they cannot be signalled), or [] when /proc cannot say."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _signal_all(sig: int, linux: bool) -> bool:
    """Send ``sig`` to every descendant; True if there was any."""
    me = os.getpid()
    if not linux:
        # Only the group can be reached. Not SIGKILL, which would end us too:
        # Tangents SIGKILLs the group once we have exited.
        if sig != signal.SIGKILL:
            try:
                os.killpg(os.getpgrp(), sig)  # we ignore it by now
            except OSError:
                pass
        return False
    pids = descendants(me)
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    return bool(pids)


class _Children:
    """Reaps exited children (orphans re-parented here included), keeping the
    command's own wait status."""

    def __init__(self, command: int) -> None:
        self.command = command
        self.status: int | None = None

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.command:
                self.status = status


def _end_all(grace: float, linux: bool, children: _Children) -> None:
    if grace > 0 and _signal_all(signal.SIGTERM, linux):
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            children.reap()
            if linux and not descendants(os.getpid()):
                return
            time.sleep(0.02)
    for _ in range(50):  # killing a parent re-parents its children here: repeat
        had_any = _signal_all(signal.SIGKILL, linux)
        children.reap()
        if not had_any:
            return
        time.sleep(0.01)


def main(argv: list[str]) -> int:
    parent = None
    if len(argv) >= 2 and argv[0] == "--parent":
        parent = int(argv[1])
        argv = argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("supervisor: no command given", file=sys.stderr)
        return 2
    # Signals are only ever taken with sigwait: a stop can never interrupt the
    # cleanup half-way (blocked first, so a death signal is kept, not lost).
    watched = {signal.SIGCHLD, *_STOP_SIGNALS}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    linux = sys.platform.startswith("linux")
    if linux:
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        linux = _prctl(PR_SET_CHILD_SUBREAPER, 1) and os.path.isdir("/proc")
    if parent is not None and os.getppid() != parent:
        return 143  # Tangents died before the death signal was armed
    command = os.fork()
    if command == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, watched)
        try:
            os.execvp(argv[0], argv)
        except OSError as error:
            os.write(2, f"cannot run {argv[0]}: {error.strerror}\n".encode())
        os._exit(127)
    children = _Children(command)
    stopped = False
    while children.status is None and not stopped:
        if signal.sigwait(watched) == signal.SIGCHLD:
            children.reap()
        else:
            stopped = True
    _end_all(GRACE if stopped else 0.0, linux, children)
    status = children.status if children.status is not None else signal.SIGTERM
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
