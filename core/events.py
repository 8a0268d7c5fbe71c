"""What a conversation reports while it runs: one typed event stream.

Every front end (the chat screen, print mode, ``--json``) is a consumer of
these events; nothing in ``core`` knows who listens. The stream is:

- the provider's own events as they arrive: :class:`TextDelta`,
  :class:`ThinkingDelta`, :class:`ToolCallDelta`, :class:`UsageEvent`,
  :class:`Done`, :class:`ErrorEvent` (``core.providers.base``);
- :class:`Waiting` before a retry, :class:`Notice` for the user,
  :class:`CompactionStarted` before the conversation is compacted,
  :class:`WindowLearned` when the model's server said how large its window is;
- :class:`ToolChanged` on every change of a tool call's state (waiting,
  waiting for approval when ``activity.preview`` is set, running, done, error,
  denied);
- :class:`EntriesSaved` after every write to the session, whoever wrote it
  (the user's message, a reply, a round of tool results, a compaction);
- :class:`PositionMoved` when the conversation's leaf moves;
- :class:`TurnEnded` once a reply (with all its tool rounds) is over.

Listeners are called synchronously, in order, and must not raise or block:
a front end that needs to await (the chat view) queues the events and works
through them in its own task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from core.entries import Entry
from core.providers.base import ProviderError, StreamEvent

if TYPE_CHECKING:
    from core.agent import AgentResult, ToolActivity


@dataclass(frozen=True)
class Waiting:
    """A request failed in a way worth retrying; the next try is in ``seconds``."""

    seconds: float
    error: ProviderError


@dataclass(frozen=True)
class Notice:
    """Something the user should read (an MCP server that did not start, turns
    left out to fit the window, a failed automatic compaction)."""

    text: str


@dataclass(frozen=True)
class CompactionStarted:
    trigger: str
    """``auto`` (over the threshold), ``overflow`` (the provider refused) or ``manual``."""


@dataclass(frozen=True)
class WindowLearned:
    """The model's endpoint said how large its context window is (the
    conversation's settings now say so too)."""

    model: str
    tokens: int
    source: str
    """``vllm``, ``llama.cpp``, ``ollama`` or ``lm-studio``; ``overflow`` when the
    server refused a request of ``tokens`` as too long (its window is smaller)."""


@dataclass(frozen=True)
class ToolChanged:
    """A tool call changed state; the same ``activity`` object, updated in place,
    comes with every change of one call (``activity.call.id`` names it)."""

    activity: ToolActivity


@dataclass(frozen=True)
class EntriesSaved:
    entries: Sequence[Entry]


@dataclass(frozen=True)
class PositionMoved:
    leaf_id: str | None
    left_branch: bool
    """The move left a branch that holds user messages (worth a summary)."""


@dataclass(frozen=True)
class TurnEnded:
    result: AgentResult


Event = Union[
    StreamEvent,
    Waiting,
    Notice,
    CompactionStarted,
    WindowLearned,
    ToolChanged,
    EntriesSaved,
    PositionMoved,
    TurnEnded,
]
Emit = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The listener of nobody."""
