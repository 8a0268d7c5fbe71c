"""Tools the model can call: the registry, the built-ins, MCP servers.

Public API (see each module for details):

* :class:`Tool`, :class:`ToolOutput`, :class:`ToolContext`, :class:`ToolError`
  (core.tools.base): what a tool is and returns;
* :class:`Approval`, :data:`ApproveFn`: the approval callback a front end gives
  the agent loop (``await approve(call, tool, preview) -> Approval``);
* :class:`ToolRegistry` (core.tools.registry): built-ins plus MCP tools, wire
  names, "allow for this session" memory;
* :class:`Roots` (core.tools.paths): the directories tools may use;
* :func:`builtin_tools` (core.tools.builtin).

The loop that runs them is core.chat.agent.run_agent.
"""

from core.tools.base import (
    Approval,
    ApproveFn,
    Decision,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    checked_arguments,
)
from core.tools.builtin import builtin_tools
from core.tools.paths import Roots
from core.tools.registry import ToolRegistry, wire_name

__all__ = [
    "Approval",
    "ApproveFn",
    "Decision",
    "Roots",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "ToolRegistry",
    "builtin_tools",
    "checked_arguments",
    "wire_name",
]
