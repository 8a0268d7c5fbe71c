"""The stdio transport for MCP servers: a process under the supervisor, JSON-RPC
lines on its stdin and stdout, every wait bounded.

Used instead of the ``mcp`` package's ``stdio_client`` for what a hostile or
broken server can do to it:

* the process runs under core/tools/supervisor.py in its own session, so
  everything it starts ends with it, or when Tangents dies (even by SIGKILL);
  its process group is recorded (core.tools.process.track), so
  :func:`core.tools.process.kill_all` can end it synchronously;
* it gets the filtered environment (core.tools.env), not ours;
* a long line is parsed in a worker process, and a tool list longer than
  :data:`core.tools.tool_list.MAX_TOOLS` is cut there (core.tools.tool_list;
  :attr:`StdioProcess.tools_cut` counts what was left out), before the
  ``mcp`` client validates it on the event loop;
* a stdout line that is not a JSON-RPC message (garbage, or a line longer than
  :data:`MAX_LINE`) is counted in :attr:`StdioProcess.garbage` and dropped:
  no log record, no traceback, bounded memory;
* stopping it (stdin closed, SIGTERM to the group, SIGKILL) takes at most
  about :data:`STOP_GRACE` + :data:`TERM_GRACE` seconds, even when cancelled.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import signal
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from core.tools.process import (
    close_transport,
    kill_group,
    kill_tree,
    stop_group,
    supervised,
    track,
    untrack,
)
from core.tools.tool_list import trimmed

MAX_LINE = 32 * 1024 * 1024
"""Longest stdout line read as a message; longer ones are garbage."""
BIG_LINE = 64 * 1024
"""Longer lines are parsed in a thread."""
STOP_GRACE = 0.5
"""Seconds the server has to exit after its stdin closes."""
TERM_GRACE = 1.5
"""Seconds between SIGTERM and SIGKILL for its process group."""


@dataclass
class StdioProcess:
    """What the connection can see of the running transport."""

    pgid: int | None = None
    garbage: int = 0
    """Stdout lines that were not JSON-RPC messages."""
    garbage_reported: int = 0
    tools_cut: int = 0
    """Tools left out of the tool lists the server sent (over :data:`core.tools.tool_list.MAX_TOOLS` a page)."""
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    def new_garbage(self) -> int:
        """Garbage lines since the last call (each is reported once)."""
        count = self.garbage - self.garbage_reported
        self.garbage_reported = self.garbage
        return count

    def kill(self) -> None:
        """SIGKILL the group now, unless it was stopped already (its number may
        have been reused since): the last resort when a stop overran its deadline."""
        if self.pgid is not None and not self.stopped.is_set():
            kill_group(self.pgid, signal.SIGKILL)


@asynccontextmanager
async def stdio_transport(
    argv: list[str], *, env: dict[str, str], cwd: Path, errlog: IO[bytes], handle: StdioProcess
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server; yield the (read, write) streams ``mcp.Client`` expects."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    argv = [_executable(argv[0], env, cwd), *argv[1:]]
    process = await asyncio.create_subprocess_exec(
        *supervised(argv),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=errlog,
        env=env,
        cwd=cwd,
        start_new_session=True,
        limit=MAX_LINE,
    )
    handle.pgid = process.pid
    track(process.pid)
    read_send, read_recv = anyio.create_memory_object_stream[Any](0)
    write_send, write_recv = anyio.create_memory_object_stream[Any](0)
    assert process.stdin is not None and process.stdout is not None
    stdout, stdin = process.stdout, process.stdin

    async def read() -> None:
        async with read_send:
            skipping = False  # inside a line longer than MAX_LINE
            while True:
                try:
                    line = await stdout.readline()
                except ValueError:  # over the limit: the buffer was dropped
                    if not skipping:
                        handle.garbage += 1
                    skipping = True
                    continue
                except OSError:
                    return
                if not line:
                    return
                if skipping:
                    skipping = False
                    continue
                line = line.strip()
                if not line:
                    continue
                message = None
                if line.startswith(b"{"):
                    with suppress(ValueError, RecursionError):
                        if len(line) <= BIG_LINE:
                            message = jsonrpc_message_adapter.validate_json(line, by_name=False)
                        else:
                            line, cut = await trimmed(line)
                            handle.tools_cut += cut
                            message = jsonrpc_message_adapter.validate_json(line, by_name=False)
                if message is None:
                    handle.garbage += 1
                    continue
                try:
                    await read_send.send(SessionMessage(message))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def write() -> None:
        async with write_recv:
            async for item in write_recv:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    stdin.write(data.encode() + b"\n")
                    await stdin.drain()
                except (OSError, RuntimeError):
                    await read_send.aclose()  # the session sees the connection end
                    return

    tasks = [asyncio.create_task(read()), asyncio.create_task(write())]
    try:
        yield read_recv, write_send
    finally:
        await asyncio.shield(_stop(process, tasks, handle))


def _executable(command: str, env: dict[str, str], cwd: Path) -> str:
    """The program ``command`` names, checked here: under the supervisor a
    failed exec would only show as an early exit."""
    if os.sep in command:
        path = cwd / command
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, "not found", command)
        if not os.access(path, os.X_OK) or path.is_dir():
            raise PermissionError(errno.EACCES, "not executable", command)
        return str(path)
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, "not found", command)
    return found


async def _stop(
    process: asyncio.subprocess.Process, tasks: list[asyncio.Task[None]], handle: StdioProcess
) -> None:
    """Close stdin; SIGTERM the group if the server is still there after
    STOP_GRACE, SIGKILL after TERM_GRACE more. Never waits longer."""
    pgid = process.pid
    assert process.stdin is not None
    with suppress(OSError, RuntimeError):
        process.stdin.close()
    if not await _exited(process, STOP_GRACE):
        stop_group(pgid)
        if not await _exited(process, TERM_GRACE):
            kill_tree(process)
            await _exited(process, 0.5)
    kill_group(pgid, signal.SIGKILL)  # anything left in the group
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    untrack(pgid)
    close_transport(process)
    handle.stopped.set()


async def _exited(process: asyncio.subprocess.Process, seconds: float) -> bool:
    # Not process.wait(): on 3.11 it also waits for the pipes to close.
    deadline = time.monotonic() + seconds
    while process.returncode is None:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True
