"""What a tool is, what it returns, and how a call is checked and approved.

A :class:`Tool` has a name, a description, a JSON schema for its arguments and
a flag saying whether it has side effects. Before anything runs, a call's
arguments are parsed and validated against the schema
(:func:`checked_arguments`); a call that fails either check becomes an error
result for the model, never a call.

Tools with side effects need the user's approval (unless they come from a
trusted MCP server): the front end passes an :data:`ApproveFn` to the agent
loop, which calls it with the call, the tool and a preview (for ``write_file``
a unified diff) and gets an :class:`Approval` back.

This module is light: jsonschema is imported on first validation.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from core.providers.base import ToolSpec
from core.sessions.content import ImageContent, TextContent, ToolCallContent, ToolResultContent
from core.sessions.messages import Message
from core.tools.env import EnvPolicy
from core.tools.errors import ToolError
from core.tools.schema_worker import readable_errors

if TYPE_CHECKING:
    from core.sessions.persistence import SessionStore
    from core.tools.paths import Roots


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: text and images, and whether it failed."""

    content: tuple[TextContent | ImageContent, ...]
    is_error: bool = False

    @classmethod
    def text(cls, text: str, *, is_error: bool = False) -> ToolOutput:
        return cls((TextContent(text),), is_error)

    @classmethod
    def error(cls, text: str) -> ToolOutput:
        return cls((TextContent(text),), True)


@dataclass
class ToolContext:
    """What a running tool may use: the directories it may touch, the blob
    store (images read by a tool are stored there) and which environment
    variables a command may see."""

    roots: Roots
    store: SessionStore | None = None
    env: EnvPolicy = field(default_factory=EnvPolicy)

    @property
    def cwd(self) -> Path:
        return self.roots.cwd


ToolRun = Callable[[dict[str, Any], ToolContext], Awaitable["ToolOutput | str"]]
"""Runs a call with checked arguments. Raise :class:`ToolError` for a failure
the model should read; a returned string is a successful text result."""

ToolPreview = Callable[[dict[str, Any], ToolContext], Awaitable[str]]
"""What the user is shown before approving a call. May raise :class:`ToolError`
(e.g. a path outside the working directory): the call then fails at once,
without asking."""


@dataclass(frozen=True)
class Tool:
    name: str
    """What the user sees: ``read_file``, or ``server.tool`` for an MCP tool."""
    description: str
    parameters: dict[str, Any]
    """JSON schema of the arguments object."""
    run: ToolRun = field(repr=False, compare=False)
    side_effects: bool = False
    """Changes something (files, processes, a remote service): runs alone, in
    order, and only after approval. Tools without side effects may run
    concurrently."""
    wire_name: str = ""
    """The name sent to providers (``^[a-zA-Z0-9_-]{1,64}$``); defaults to ``name``.
    MCP tools are sent as ``server__tool`` (see core.tools.registry)."""
    source: str = "builtin"
    """``builtin`` or ``mcp:<server>``."""
    trusted: bool = False
    """Runs without approval despite side effects (a trusted MCP server)."""
    preview: ToolPreview | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.wire_name:
            object.__setattr__(self, "wire_name", self.name)

    @property
    def needs_approval(self) -> bool:
        return self.side_effects and not self.trusted

    def spec(self) -> ToolSpec:
        return ToolSpec(self.wire_name, self.description, self.parameters)

    async def make_preview(self, arguments: dict[str, Any], context: ToolContext) -> str:
        if self.preview is not None:
            return await self.preview(arguments, context)
        return f"{self.name} {json.dumps(arguments, indent=2, ensure_ascii=False)}"


# --- approval ------------------------------------------------------------------

Decision = Literal["once", "session", "deny"]


@dataclass(frozen=True)
class Approval:
    decision: Decision
    """``once``: run this call; ``session``: run it and every later call of this
    tool without asking (until :meth:`ToolRegistry.forget_approvals`);
    ``deny``: do not run it."""
    message: str | None = None
    """With ``deny``: why, or what to do instead; the model reads it."""


ApproveFn = Callable[[ToolCallContent, Tool, str], Awaitable[Approval]]
"""``await approve(call, tool, preview) -> Approval``: ask the user."""


# --- checking a call -------------------------------------------------------------


def checked_arguments(call: ToolCallContent, tool: Tool) -> dict[str, Any]:
    """The call's arguments, parsed and validated against the tool's schema.

    Raises :class:`ToolError` naming what is wrong, for the model to fix.
    Runs the schema here: for a schema from outside, see core.tools.arg_check.
    """
    arguments = parsed_arguments(call, tool)
    refuse_invalid(tool, validation_errors(tool.parameters, arguments))
    return arguments


def parsed_arguments(call: ToolCallContent, tool: Tool) -> dict[str, Any]:
    """The call's arguments as an object (not checked against the schema yet)."""
    raw = call.raw_arguments
    if not raw.strip():
        return dict(call.arguments)
    try:
        value = json.loads(raw)
    except ValueError as error:
        raise ToolError(
            f"the arguments are not valid JSON ({error}); nothing was run. "
            f"Send a JSON object matching the schema of {tool.wire_name}."
        ) from None
    if not isinstance(value, dict):
        raise ToolError(
            f"the arguments must be a JSON object, not {_json_type(value)}; nothing was run."
        )
    return value


def refuse_invalid(tool: Tool, problems: list[str]) -> None:
    """:class:`ToolError` listing ``problems``, when there are any."""
    if problems:
        listed = "; ".join(problems)
        raise ToolError(f"invalid arguments for {tool.wire_name}: {listed}. Nothing was run.")


def validation_errors(schema: dict[str, Any], value: Any, limit: int = 8) -> list[str]:
    """Readable schema violations (``at 'path': ...``), at most ``limit``."""
    return readable_errors(_validator(json.dumps(schema, sort_keys=True)), value, limit)


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a usable JSON schema for an arguments object, or None."""
    from jsonschema import exceptions, validators

    if not isinstance(schema, dict):
        return "the schema is not an object"
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as error:
        return f"invalid schema: {error.message}"
    except RecursionError:
        return "the schema is nested too deeply"
    return None


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    from jsonschema import Draft202012Validator, validators

    schema = json.loads(schema_json)
    cls = validators.validator_for(schema, default=Draft202012Validator)
    return cls(schema)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null"


# --- results ---------------------------------------------------------------------


def error_result(call: ToolCallContent, text: str) -> ToolResultContent:
    return ToolResultContent(call.id, (TextContent(text),), is_error=True)


def unrun_results(calls: Sequence[ToolCallContent], text: str) -> Message:
    """A ``tool_result`` message answering every call with an error: saved with
    an assistant turn whose calls will never run, so none is left without a result."""
    return Message(role="tool_result", content=tuple(error_result(call, text) for call in calls))
