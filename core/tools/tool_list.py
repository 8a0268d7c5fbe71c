"""Cutting an MCP server's long tool list off the event loop.

The ``mcp`` client validates every message on the event loop, about a
millisecond a tool, and ``json`` holds the interpreter even in a thread: a
big message is parsed and its tool list cut to :data:`MAX_TOOLS` in a worker
process (core/tools/tool_list_worker.py) first, so what reaches the client is
small. Used by the stdio and the HTTP transports alike.
"""

from __future__ import annotations

from pathlib import Path

from core.tools.worker import run_worker

MAX_TOOLS = 500
"""Tools kept from one page of a server's tool list."""
PARSE_SECONDS = 60.0
"""How long the worker may take over one message; past it the message is dropped."""
TOOL_LIST_WORKER = str(Path(__file__).with_name("tool_list_worker.py"))


async def trimmed(message: bytes) -> tuple[bytes, int]:
    """``message`` (JSON-RPC) with a tool list in it cut to :data:`MAX_TOOLS`,
    and how many tools were cut; empty when the worker ran out of time."""
    job = {"body": message.decode(errors="replace"), "keep": MAX_TOOLS}
    try:
        out = await run_worker(TOOL_LIST_WORKER, job, PARSE_SECONDS, site=False)
    except TimeoutError:
        return b"", 0
    cut, _, body = out.partition(b"\n")
    return body, int(cut or 0)
