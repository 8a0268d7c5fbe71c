"""What a conversation reports while it runs: one typed event stream.

Every front end (the chat screen, print mode, ``--json``) is a consumer of
these events; nothing in ``core`` knows who listens. The stream is:

- the provider's own events as they arrive: :class:`TextDelta`,
  :class:`ThinkingDelta`, :class:`ToolCallDelta`, :class:`UsageEvent`,
  :class:`Done`, :class:`ErrorEvent` (``core.providers.base``);
- :class:`Waiting` before a retry, :class:`Silence` once a second while a
  reply's stream sends nothing, :class:`Notice` for the user,
  :class:`CompactionStarted` before the conversation is compacted,
  :class:`CompactionEnded` after it (written, failed or stopped),
  :class:`WindowLearned` when the model's server said how large its window is;
- :class:`ToolChanged` on every change of a tool call's state (waiting,
  waiting for approval when ``activity.preview`` is set, running, done, error,
  denied);
- :class:`EntriesSaved` after every write to the session, whoever wrote it
  (the user's message, a reply, a round of tool results, a compaction);
- :class:`PositionMoved` when the conversation's leaf moves;
- :class:`TurnEnded` once a reply (with all its tool rounds) is over;
- during a comparison (several models answering one question at once), each
  model's progress tagged with its column: :class:`ColumnEvent` for each of
  its stream events, :class:`ColumnWaiting` before a retry,
  :class:`ColumnFinished` when its reply is saved.

Listeners are called synchronously, in order, and must not raise or block:
a front end that needs to await (the chat view) queues the events and works
through them in its own task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from core.providers.base import ProviderError, StreamEvent
from core.sessions.entries import Entry
from core.sessions.messages import Message

if TYPE_CHECKING:
    from core.chat.results import AgentResult, ToolActivity


@dataclass(frozen=True)
class Waiting:
    """A request failed in a way worth retrying; the next try is in ``seconds``."""

    seconds: float
    error: ProviderError


@dataclass(frozen=True)
class Silence:
    """Nothing has arrived for ``seconds``: before the first token (not
    ``started``) or since the last one (:mod:`core.providers.limits`)."""

    seconds: float
    started: bool

    @property
    def text(self) -> str:
        """What the front ends show: ``waiting for the first token · 42 s``."""
        what = "no data from the server" if self.started else "waiting for the first token"
        return f"{what} · {int(self.seconds)} s"


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
class CompactionEnded:
    trigger: str
    entry: Entry | None
    """The compaction written; None when it failed or was stopped (nothing written)."""


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
class AgentAsked:
    """A round-table agent starts its reply (what streams next is its)."""

    agent: str
    model: str


@dataclass(frozen=True)
class TurnEnded:
    result: AgentResult


@dataclass(frozen=True)
class ColumnReply:
    """What one model's column ended with."""

    column: int
    model: str
    thinking: str
    entries: tuple[Entry, ...]
    """What was saved, oldest first: a model change (if needed), then the reply."""
    error: str | None = None
    """The provider's error, or why the column failed (its reply may be partial)."""

    @property
    def reply(self) -> Entry | None:
        last = self.entries[-1] if self.entries else None
        return last if last is not None and last.message is not None else None

    @property
    def message(self) -> Message | None:
        reply = self.reply
        return reply.message if reply is not None else None


@dataclass(frozen=True)
class ColumnEvent:
    """A stream event of one column's reply."""

    column: int
    model: str
    event: StreamEvent


@dataclass(frozen=True)
class ColumnWaiting:
    """One column waits ``seconds`` before retrying after ``error``."""

    column: int
    model: str
    seconds: float
    error: ProviderError


@dataclass(frozen=True)
class ColumnFinished:
    """One column's reply is over and saved (what streamed, when stopped or failed)."""

    column: int
    result: ColumnReply


FanOutEvent = Union[ColumnEvent, ColumnWaiting, ColumnFinished]


Event = Union[
    StreamEvent,
    Waiting,
    Silence,
    Notice,
    CompactionStarted,
    CompactionEnded,
    WindowLearned,
    ToolChanged,
    EntriesSaved,
    PositionMoved,
    AgentAsked,
    TurnEnded,
    ColumnEvent,
    ColumnWaiting,
    ColumnFinished,
]
Emit = Callable[[Event], None]


def ignore(event: Event) -> None:
    """The listener of nobody."""
