"""Checking a call's arguments without ever holding the event loop.

A schema with a ``pattern`` (or ``patternProperties``) may come from an MCP
server and backtrack for hours; such a schema is run in core/tools/
schema_worker.py, a process killed after :data:`CHECK_SECONDS`, and the call
is refused in one line. Any other schema is run in a thread.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from core.sessions.content import ToolCallContent
from core.tools.base import Tool, ToolError, parsed_arguments, refuse_invalid, validation_errors
from core.tools.worker import run_worker

CHECK_SECONDS = 5.0
"""Seconds a schema with patterns may take to check one call's arguments."""
PROBLEMS = 8
"""Problems listed at most when the arguments do not match."""
SCHEMA_WORKER = str(Path(__file__).with_name("schema_worker.py"))
_REGEX_KEYS = frozenset({"pattern", "patternProperties"})


async def check_arguments(call: ToolCallContent, tool: Tool) -> dict[str, Any]:
    """The call's arguments, parsed and valid for ``tool``; else :class:`ToolError`."""
    arguments = parsed_arguments(call, tool)
    if has_patterns(tool.parameters):
        problems = await _in_worker(tool, arguments)
    else:
        problems = await asyncio.to_thread(validation_errors, tool.parameters, arguments, PROBLEMS)
    refuse_invalid(tool, problems)
    return arguments


def has_patterns(schema: Any) -> bool:
    """Whether a regular expression appears anywhere in ``schema``."""
    todo = [schema]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            if _REGEX_KEYS & item.keys():
                return True
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return False


async def _in_worker(tool: Tool, arguments: dict[str, Any]) -> list[str]:
    job = {"schema": tool.parameters, "value": arguments, "limit": PROBLEMS}
    try:
        out = await run_worker(SCHEMA_WORKER, job, CHECK_SECONDS, site=True)
    except TimeoutError:
        raise ToolError(
            f"the arguments could not be checked within {CHECK_SECONDS:g} s against the schema "
            f"of {tool.wire_name} (a pattern in it takes too long to match); nothing was run."
        ) from None
    try:
        problems = json.loads(out)
    except ValueError:
        raise ToolError(
            f"the arguments could not be checked against the schema of {tool.wire_name}; "
            "nothing was run."
        ) from None
    return [str(p) for p in problems]
