"""What a turn and a tool loop hand back: the saved turn
(:class:`TurnResult`), each tool call as a card shows it
(:class:`ToolActivity`), and the loop's outcome (:class:`AgentResult`).

They live below :mod:`core.chat.events`, :mod:`core.chat.turn` and
:mod:`core.chat.agent`, which all speak of them, so that none of those three
imports another that imports it back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from core.providers.base import ProviderError
from core.sessions.entries import Entry
from core.sessions.messages import Message

if TYPE_CHECKING:
    from core.sessions.content import ToolCallContent, ToolResultContent
    from core.sessions.context import Context
    from core.tools.base import Tool

ToolState = Literal["pending", "running", "done", "error", "denied"]
AgentStop = Literal["answered", "step_limit", "call_limit", "error", "incomplete"]


@dataclass
class TurnResult:
    entry: Entry | None
    """None only with ``defer_tool_calls`` when the reply has tool calls: the
    caller appends ``pending`` together with the results (core.chat.agent)."""
    error: ProviderError | None
    context: Context
    pending: Message | None = None
    pending_id: str | None = None
    """The id ``pending`` must be appended with (its checkpoints' id)."""
    compactions: tuple[Entry, ...] = ()
    """Compaction entries this turn appended (automatic, or after a context overflow)."""
    notes: tuple[str, ...] = ()
    """For the user: messages shortened or stubbed to fit the window, a compaction that failed."""
    refused_tokens: int = 0
    """The estimated size of a request the server refused as too long (its
    window is smaller), when this turn ended on that refusal."""

    @property
    def message(self) -> Message:
        if self.entry is None:
            assert self.pending is not None
            return self.pending
        payload = self.entry.payload
        assert isinstance(payload, Message)  # a turn saves messages only
        return payload


@dataclass
class ToolActivity:
    """One tool call as a card shows it. The same object is passed to every callback
    for a call, updated in place; ``call.id`` identifies it."""

    call: ToolCallContent
    tool: Tool | None
    """None when the model named a tool that does not exist."""
    name: str
    """The name to show (``server.tool`` for MCP tools)."""
    state: ToolState = "pending"
    """pending (waiting its turn or for approval) -> running -> done | error;
    or pending -> error (bad arguments, refused path) | denied."""
    preview: str | None = None
    """What the user was asked to approve (for write_file, a diff)."""
    started_at: float | None = None
    """``time.monotonic()`` when it started running."""
    ended_at: float | None = None
    result: ToolResultContent | None = None

    @property
    def elapsed(self) -> float | None:
        """Seconds it ran (so far, while running); None if it never ran."""
        if self.started_at is None:
            return None
        return (self.ended_at if self.ended_at is not None else time.monotonic()) - self.started_at

    @property
    def finished(self) -> bool:
        return self.state in ("done", "error", "denied")


@dataclass
class AgentResult:
    turns: list[TurnResult]
    """Every assistant turn, in order; each is saved (``entry`` set)."""
    stop: AgentStop
    """answered: the last turn has no tool calls; step_limit: max_tool_steps
    rounds ran and the model still called tools (those calls got error results);
    call_limit: the reply called more tools than ``tools.max_calls_per_reply``
    (the calls over it got error results); error: the provider failed (``error``); incomplete: the reply was cut off
    (output limit, dropped connection)."""
    steps: int
    """Tool rounds run."""
    notices: list[str] = field(default_factory=list)

    @property
    def final(self) -> TurnResult:
        return self.turns[-1]

    @property
    def message(self) -> Message:
        return self.final.message

    @property
    def error(self):  # ProviderError | None
        return self.final.error
