"""Running a worker script (one JSON job on stdin, its answer on stdout) as
its own process, killed at a deadline or when the caller is cancelled: the
way to bound work that holds the interpreter (a backtracking regular
expression, a quadratic diff), which no thread can stop."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from core.tools.process import close_transport, protect_environ


async def run_worker(script: str, job: dict[str, Any], seconds: float, *, site: bool) -> bytes:
    """What ``script`` wrote to stdout for ``job`` (``parent``, our pid, is
    added). :class:`TimeoutError` after ``seconds``. ``site``: the script
    needs installed packages (else it runs with ``-S``, starting faster)."""
    protect_environ()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        *(() if site else ("-S",)),
        script,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        data = json.dumps({**job, "parent": os.getpid()}).encode()
        out, _ = await asyncio.wait_for(process.communicate(data), seconds)
    finally:
        if process.returncode is None:
            process.kill()
            await asyncio.shield(process.wait())
        close_transport(process)
    return out
