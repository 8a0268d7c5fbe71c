"""What a front end hands the conversation's doors (``send``, ``edit``,
``retry``, ``round``): the tools it offers the model, and hooks for what it
does between a turn's steps. Both are arguments of the call, never state left
on the conversation, so two front ends (or two calls) cannot see each other's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.chat.results import AgentResult
    from core.sessions.entries import Entry
    from core.tools.base import ApproveFn
    from core.tools.registry import ToolRegistry

Answer = Callable[[], Awaitable["AgentResult | None"]]
"""The conversation's own answer to what the path ends with."""


@dataclass(frozen=True)
class ToolUse:
    """The tools a reply may call, and who says yes to those with side effects."""

    registry: ToolRegistry
    approve: ApproveFn | None = None
    """Asked before a tool with side effects runs; None: such calls are denied."""


@dataclass(frozen=True)
class TurnHooks:
    """What a front end does between the steps of a send, an edit or a retry."""

    saved: Callable[[Sequence[Entry]], None] | None = None
    """The user's message is saved (these entries), before anything answers
    it; told even when the send was stopped while saving."""
    left: Callable[[str | None, bool], Awaitable[bool]] | None = None
    """An edit moved to the edited message's parent, from this leaf, leaving a
    branch (True) or not: False holds the edit back (the front end sends the
    text itself later, e.g. once a branch summary is made)."""
    answering: Callable[[Answer], Awaitable[AgentResult | None]] | None = None
    """Runs the answer (``await answer()``), wrapped as the front end needs
    (a live view around it), or answers otherwise (several models at once)
    and returns None."""
