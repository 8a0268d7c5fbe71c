"""Cutting an MCP server's long tool list, as its own process.

Parsing a body of 100,000 tools takes a while in ``json`` (which holds the
interpreter even in a thread), so core.tools.mcp_http runs
``python -I -S tool_list_worker.py`` through core.tools.worker for a big body,
with a deadline. Standard library only.

Input on stdin, one JSON object: ``parent`` (our pid), ``body`` (the response
text), ``keep`` (tools kept). Output on stdout: how many tools were cut, a
newline, then the body (unchanged when nothing was cut or it is not JSON).
"""

from __future__ import annotations

import json
import os
import sys


def trimmed(body: str, keep: int) -> tuple[str, int]:
    """``body`` with a ``result.tools`` list cut to ``keep``; how many were cut."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return body, 0  # the client reports it
    result = data.get("result") if isinstance(data, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list) or len(tools) <= keep:
        return body, 0
    cut = len(tools) - keep
    del tools[keep:]
    return json.dumps(data), cut


def _die_with_parent(parent: int) -> None:
    """On Linux, be SIGKILLed when Tangents dies."""
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
    body, cut = trimmed(job["body"], job["keep"])
    sys.stdout.buffer.write(f"{cut}\n".encode() + body.encode("utf-8", errors="replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
