"""Fan-out: one question answered by several models at once.

The session's path must end with the question (a user message, or tool
results): every model's reply streams concurrently and is saved as its own
alternative under it, behind a ``model_change`` when the path's model differs
(as a regenerated reply is), with its usage and cost, and with how long it
took in ``meta["timing"]`` (:data:`core.branching.comparison.TIMING_KEY`: seconds to
the first token, seconds in all). Replies are answers without tools: a
comparison of answers, not of agents.

Progress comes as events tagged with the column (the model's place in the
list): :class:`ColumnEvent` for each stream event, :class:`ColumnWaiting`
before a retry, :class:`ColumnFinished` when a reply is saved. A model that
fails ends its own column with its error; the others go on. Cancelling (Esc)
stops every stream: each saves what arrived, marked ``aborted``.

At the end the position is on the first model's reply (the columns' replies
are siblings; the compare screen moves it to the one the user keeps).

Each column writes through its own handle on the session
(:class:`_ColumnSession`), positioned at the question, so the columns'
appends never land under each other. The main session's append listeners do
not hear them (those appends are not on its path): the caller learns what was
saved from :class:`ColumnFinished` events or the result.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from core.branching.comparison import TIMING_KEY
from core.chat.events import (
    ColumnEvent,
    ColumnFinished,
    ColumnReply,
    ColumnWaiting,
    Event,
    FanOutEvent,
    Waiting,
)
from core.chat.target import savable_base_url
from core.providers.base import (
    STREAM_EVENT_TYPES,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from core.providers.target import Target
from core.sessions.entries import Entry, ModelChange, Payload
from core.sessions.messages import Message
from core.sessions.session import Session
from core.sessions.speakers import Speaker
from core.settings import MAX_MODELS, MIN_MODELS, Settings


class FanOutError(ValueError):
    """A fan-out that cannot start (too few or too many models, nothing to answer)."""


FanOutHandler = Callable[[FanOutEvent], None]


@dataclass(frozen=True)
class FanOutResult:
    columns: tuple[ColumnReply, ...]
    anchor_id: str
    """The question the replies answer."""


_CONTENT = (TextDelta, ThinkingDelta, ToolCallDelta)


class _ColumnSession(Session):
    """A handle on the session positioned at the question, for one column: its
    appends move only its own position and stamp the reply's timing."""

    def __init__(self, main: Session) -> None:
        super().__init__(main.store, main.info, list(main.path))
        self.started = time.monotonic()
        self.first_token: float | None = None
        self.saved: list[Entry] = []

    def saw(self, event: StreamEvent) -> None:
        if self.first_token is None and isinstance(event, _CONTENT):
            self.first_token = time.monotonic()

    async def append_many(
        self, payloads: Sequence[Payload], *, first_id: str | None = None
    ) -> list[Entry]:
        stamped = [self._timed(p) for p in payloads]
        entries = await super().append_many(stamped, first_id=first_id)
        self.saved.extend(entries)
        return entries

    def _timed(self, payload: Payload) -> Payload:
        if not isinstance(payload, Message) or payload.role != "assistant":
            return payload
        now = time.monotonic()
        ttft = None if self.first_token is None else round(self.first_token - self.started, 3)
        timing = {"ttft": ttft, "total": round(now - self.started, 3)}
        return replace(payload, meta={**payload.meta, TIMING_KEY: timing})


def question_at_leaf(session: Session) -> bool:
    """Whether the path ends with something a model answers."""
    last = next((e.message for e in reversed(session.path) if e.message is not None), None)
    return last is not None and last.role in ("user", "tool_result")


def distinct_models(models: Sequence[str]) -> list[str]:
    """The distinct models of ``models``; :class:`FanOutError` unless 2-4."""
    distinct = list(dict.fromkeys(m.strip() for m in models if m.strip()))
    if not MIN_MODELS <= len(distinct) <= MAX_MODELS:
        raise FanOutError(f"compare needs {MIN_MODELS} to {MAX_MODELS} different models")
    return distinct


def checked_models(session: Session, models: Sequence[str]) -> list[str]:
    """The distinct models of ``models``; :class:`FanOutError` when there are
    not 2-4 of them or the session's path does not end with a question."""
    distinct = distinct_models(models)
    if not question_at_leaf(session) or session.leaf_id is None:
        raise FanOutError("nothing to answer: send a message first")
    return distinct


async def question_of(session: Session, reply_id: str) -> str | None:
    """The entry a reply answers (through any model change in front of the
    reply): where to stand to answer it again with several models."""
    entry = await session.entry(reply_id)
    if entry.message is None or entry.message.role != "assistant":
        raise FanOutError("only a reply can be answered again")
    parent = entry.parent_id
    while parent is not None:
        above = await session.entry(parent)
        if not isinstance(above.payload, ModelChange):
            break
        parent = above.parent_id
    return parent


async def fan_out(
    session: Session,
    settings: Settings,
    models: Sequence[str],
    *,
    targets: Callable[[str], Target],
    thinking: str = "off",
    on_event: FanOutHandler | None = None,
) -> FanOutResult:
    """Answer the question at the session's leaf with every model in ``models``
    at once (see the module's docstring). Cancelling saves what streamed in
    every column, moves the position to the first reply, then re-raises. An
    error raised by ``on_event`` is raised at the end, after every reply is saved.
    Each model is sent by the target ``targets`` gives it (the conversation's
    :meth:`~core.chat.conversation.Conversation.target_for`, asked before any
    column starts), and its model change remembers the endpoint the user chose
    as a turn's does."""
    models = checked_models(session, models)
    anchor = session.leaf_id
    assert anchor is not None
    anchor_path = list(session.path)
    decided = [targets(model) for model in models]
    quiet = replace(settings, compaction=replace(settings.compaction, enabled=False))
    columns = [_ColumnSession(session) for _ in models]
    results: dict[int, ColumnReply] = {}
    failures: list[Exception] = []

    def emit(event: FanOutEvent) -> None:
        """A handler that raises must not cut a stream short (its reply would not
        be saved): the first error is raised once every column is saved."""
        if on_event is None:
            return
        try:
            on_event(event)
        except Exception as error:
            failures.append(error)

    async def run(index: int) -> None:
        from core.chat.turn import run_turn

        model, column = models[index], columns[index]

        def on_turn_event(event: Event) -> None:
            if isinstance(event, Waiting):
                emit(ColumnWaiting(index, model, event.seconds, event.error))
            elif isinstance(event, STREAM_EVENT_TYPES):
                column.saw(event)
                emit(ColumnEvent(index, model, event))

        error: str | None = None
        target = decided[index]
        try:
            await column.set_model(model, thinking, savable_base_url(target.chosen_base))
            turn = await run_turn(
                column,
                quiet,
                model=model,
                target=target,
                speaker=Speaker(thinking=thinking),
                emit=on_turn_event,
            )
            error = str(turn.error) if turn.error is not None else None
        except asyncio.CancelledError:
            error = "stopped"
            raise
        except Exception as failure:  # one model's failure must not stop the others
            error = f"{type(failure).__name__}: {failure}"
        finally:
            results[index] = ColumnReply(index, model, thinking, tuple(column.saved), error)
            emit(ColumnFinished(index, results[index]))

    tasks = [asyncio.create_task(run(i)) for i in range(len(models))]
    try:
        await asyncio.wait(tasks)
    except asyncio.CancelledError:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await _settle(session, anchor_path, columns)
        raise
    await _settle(session, anchor_path, columns)
    if failures:
        raise failures[0]
    return FanOutResult(tuple(results[i] for i in range(len(models))), anchor)


async def _settle(session: Session, anchor_path: list[Entry], columns) -> None:
    """Move the main session to the first column that saved a reply."""
    for column in columns:
        if column.saved:
            await session.move_leaf(column.saved[-1].id, path=anchor_path + column.saved)
            return
    await session.move_leaf(anchor_path[-1].id, path=anchor_path)
