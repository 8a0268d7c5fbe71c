"""One assistant turn: context -> provider stream -> saved message.

Shared by every front end through :mod:`core.chat.conversation`. The caller sees
every event (:mod:`core.chat.events`) through ``emit``; the finished (or aborted, or failed) assistant message is always
appended to the session, so what was streamed is never lost.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.chat.checkpoint import ReplyCheckpoint
from core.chat.events import CompactionEnded, CompactionStarted, Emit, Silence, Waiting, ignore
from core.chat.refused_kinds import (
    META_KEY,
    recorded,
    refusal_error,
    refused_kinds,
    sent_kinds,
)
from core.chat.results import TurnResult
from core.chat.target import summarizer_for
from core.chat.window_full import stopped_by_window, window_full
from core.providers.base import ChatRequest, ProviderError, ToolSpec
from core.providers.target import Target
from core.sessions.context import Context, estimate_tokens, estimated_tokens, system_prompt
from core.sessions.entries import Entry
from core.sessions.messages import Message
from core.sessions.session import Session
from core.sessions.speakers import Speaker
from core.settings import Settings
from core.tokens import estimated_usage

if TYPE_CHECKING:
    from core.compaction.plan import Budget


async def run_turn(
    session: Session,
    settings: Settings,
    *,
    model: str,
    target: Target,
    speaker: Speaker | None = None,
    emit: Emit = ignore,
    tools: Sequence[ToolSpec] = (),
    defer_tool_calls: bool = False,
) -> TurnResult:
    """Stream one reply to the session's path and append it, sent by
    ``target`` (the conversation's for ``model``).

    Cancellation (the user pressed Esc) appends what arrived, marked ``aborted``,
    then re-raises. The stream is bounded by the settings' time limits
    (:mod:`core.providers.limits`): one that runs out ends the reply, saved,
    with a ``timeout`` error naming it; each second of silence is emitted as
    :class:`~core.chat.events.Silence`.

    ``tools`` are offered to the model. With ``defer_tool_calls`` a finished
    reply holding tool calls is not appended but returned as ``pending``, so the
    caller can save it in one transaction with the calls' results; an aborted
    one is saved with an error result for each call it started.

    Compaction: first automatically when the context is over window -
    reserve_tokens (``CompactionStarted("auto")``); then, if older messages
    would still go only as stubs (:mod:`core.sessions.context_stubs`), once
    more to fit (``CompactionStarted("fit")``); and when the provider still
    says the context is too long, once more (``CompactionStarted("overflow")``)
    before one retry. Each ends with :class:`~core.chat.events.CompactionEnded`.

    ``speaker`` says who is asked and at which thinking level (the round-table
    agent, if any: :mod:`core.sessions.speakers`): the request is built as it
    hears the path, and the reply saved as its own.
    """
    speaker = speaker or Speaker()
    turn = _Turn(
        session,
        settings,
        model,
        speaker.thinking,
        target,
        emit,
        _overhead(session, tools),
        speaker,
    )
    prelude = await _compact_if_needed(turn)
    built = await _compact_to_fit(turn, prelude)
    result = await _ask(turn, prelude, tools, defer_tool_calls, built)
    if result is None:  # compacted after an overflow: once more
        result = await _ask(turn, prelude, tools, defer_tool_calls, retry=True)
    assert result is not None
    return result


@dataclass(frozen=True)
class _Turn:
    """What every step of one turn needs."""

    session: Session
    settings: Settings
    model: str
    thinking: str
    target: Target
    emit: Emit
    overhead: int
    """Tokens of the window the system prompt and the tool definitions take."""
    speaker: Speaker

    def on_wait(self, seconds: float, error: ProviderError) -> None:
        self.emit(Waiting(seconds, error))

    def on_silence(self, seconds: float, started: bool) -> None:
        self.emit(Silence(seconds, started))

    def on_compact(self, trigger: str) -> None:
        self.emit(CompactionStarted(trigger))


async def _ask(
    turn: _Turn,
    prelude: _Prelude,
    tools: Sequence[ToolSpec],
    defer_tool_calls: bool,
    built: Context | None = None,
    retry: bool = False,
) -> TurnResult | None:
    """One request and its saved reply (its context ``built`` already, if it
    was); None when the context overflowed and was compacted, so the caller
    asks once more (``retry``)."""
    from core.providers.assemble import MessageBuilder
    from core.providers.limits import StreamLimits, bounded
    from core.providers.registry import get_provider
    from core.providers.retry import stream_with_retry
    from core.providers.slots import slots_for

    session, settings = turn.session, turn.settings
    context = built or _context(turn, prelude)
    target = turn.target
    images = {}
    for sha in context.image_shas + context.file_shas:
        blob = await session.store.get_blob(sha)
        if blob is not None:
            images[sha] = blob.data
    request = ChatRequest(
        model=target.model,
        messages=context.messages,
        system=context.system,
        thinking=context.thinking,
        api_base=target.api_base,
        api_key=target.api_key,
        images=images,
        tools=tuple(tools),
        near_window=3 * estimated_tokens(context.messages)
        >= prelude.window,  # both net of overhead
        slots=slots_for(target, settings),
        pace=settings.pace,
    )
    provider = get_provider(target.model)
    builder = MessageBuilder(context.model, provider.name, turn.speaker.agent)
    checkpoint = ReplyCheckpoint(session)
    reply_id = checkpoint.entry_id
    try:
        attempts = stream_with_retry(
            provider, request, max_attempts=settings.retries + 1, on_wait=turn.on_wait
        )
        async for event in bounded(attempts, StreamLimits.of(settings), turn.on_silence):
            builder.add(event)
            turn.emit(event)
            if checkpoint.due(builder):
                await checkpoint.save(builder)
    except asyncio.CancelledError:
        message = _counted(builder.finish_aborted(), context, turn.overhead)
        if defer_tool_calls and message.tool_calls:
            from core.tools.base import unrun_results

            results = unrun_results(message.tool_calls, "not run: the user stopped the reply")
            await asyncio.shield(session.append_many([message, results], first_id=reply_id))
        else:
            await asyncio.shield(session.append(message, entry_id=reply_id))
        raise
    if _overflowed(builder, settings):
        if retry:  # this was the retry after compacting
            _say_still_too_long(builder)
        elif await _compact_after_overflow(turn, builder, prelude, context):
            return None
    kinds = refused_kinds(builder.error, builder.has_content, sent_kinds(context))
    if kinds and builder.error is not None:
        builder.error = refusal_error(builder.error, context.model, kinds)
    message = _counted(builder.finish(), context, turn.overhead)
    if kinds:
        message = replace(message, meta={**message.meta, META_KEY: recorded(kinds)})
    if stopped_by_window(message, request.max_tokens, provider.name):
        message = await _with_window_full(message, context.model, settings)
    compactions, notes = tuple(prelude.compactions), tuple(prelude.notes) + context.notes
    if defer_tool_calls and message.tool_calls:
        return TurnResult(None, builder.error, context, message, reply_id, compactions, notes)
    entry = await session.append(message, entry_id=reply_id)
    refused = _refused_tokens(builder, context, turn.overhead)
    return TurnResult(
        entry, builder.error, context, compactions=compactions, notes=notes, refused_tokens=refused
    )


def _refused_tokens(builder, context: Context, overhead: int) -> int:
    """The request's estimated size when the server refused it as too long."""
    if not _refused_as_too_long(builder):
        return 0
    return estimated_tokens(context.messages) + overhead


def _context(turn: _Turn, prelude: _Prelude) -> Context:
    """What the request sends, fitted to the prelude's token budget."""
    return turn.session.context(
        turn.model,
        default_thinking=turn.thinking,
        image_budget=turn.settings.image_budget,
        refused=turn.settings.refused_kinds.get(prelude.model, ()),
        token_budget=prelude.token_budget,
        speaker=turn.speaker,
    )


def _counted(message: Message, context: Context, overhead: int) -> Message:
    """A reply its server said no usage for (llama-cpp-python) carries an
    estimate, marked so: totals and ``sessions show`` are not zero."""
    if not message.content or (message.usage is not None and message.usage.total_tokens):
        return message
    return replace(message, usage=estimated_usage(context.messages, overhead, message))


async def _with_window_full(message: Message, model: str, settings: Settings) -> Message:
    from core.tokens import context_window, known_context_window

    known = await asyncio.to_thread(known_context_window, model, settings.context_windows)
    if known is not None:
        return window_full(message, known, guessed=False)
    guess = await asyncio.to_thread(context_window, model, settings.context_windows)
    return window_full(message, guess, guessed=True)


# --- what is sent -----------------------------------------------------------


def next_context(
    session: Session,
    settings: Settings,
    *,
    model: str,
    thinking: str = "off",
    tools: Sequence[ToolSpec] = (),
) -> Context:
    """What the next request on the session's path sends, built as a turn
    builds it (after any compaction it makes): the ``openai`` export."""
    _, limits = request_budget(session, settings, model, thinking, _overhead(session, tools))
    return session.context(
        model,
        default_thinking=thinking,
        image_budget=settings.image_budget,
        token_budget=limits.threshold,
    )


def request_budget(
    session: Session, settings: Settings, model: str, thinking: str, overhead: int
) -> tuple[str, Budget]:
    """The path's model and the limits of its window for a request whose
    system prompt and tools take ``overhead`` tokens."""
    from core.compaction.run import budget

    path_model = session.model(model, thinking)[0]
    return path_model, budget(path_model, settings, overhead)


# --- compaction around a turn ------------------------------------------------


def _overhead(session: Session, tools: Sequence[ToolSpec]) -> int:
    """What every request carries besides the messages, in estimated tokens
    (~4 characters a token, as the messages are estimated)."""
    system = system_prompt(session.path) or ""
    specs = json.dumps([[t.name, t.description, t.parameters] for t in tools])
    return (len(system) + (len(specs) if tools else 0)) // 4


@dataclass
class _Prelude:
    """What happened before the request: compactions, notes, the token budget."""

    model: str
    token_budget: int
    window: int
    compactions: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: bool = False
    """A compaction of this turn failed: another would fail the same way."""


async def _compact_if_needed(turn: _Turn) -> _Prelude:
    """Automatic compaction when the context is over window - reserve. A failed
    compaction does not stop the turn: the context builder's safety net sends
    the oldest messages as stubs instead, and a note says so."""
    from core.compaction.run import CompactionError, maybe_compact

    session, settings = turn.session, turn.settings
    path_model, limits = request_budget(session, settings, turn.model, turn.thinking, turn.overhead)
    prelude = _Prelude(path_model, limits.threshold, limits.window)
    started: list[str] = []
    entry = None

    def on_compact(trigger: str) -> None:
        started.append(trigger)
        turn.on_compact(trigger)

    try:
        entry = await maybe_compact(
            session,
            settings,
            model=path_model,
            summarizer=summarizer_for(path_model, turn.target, settings),
            on_compact=on_compact,
            on_wait=turn.on_wait,
            overhead=turn.overhead,
        )
    except CompactionError as error:
        prelude.notes.append(f"automatic compaction failed: {error}")
        prelude.failed = True
    else:
        if entry is not None:
            prelude.compactions.append(entry)
    finally:
        if started:
            turn.emit(CompactionEnded("auto", entry))
    return prelude


async def _compact_to_fit(turn: _Turn, prelude: _Prelude) -> Context | None:
    """Compact when the request would carry older messages only as stubs,
    though automatic compaction did not run or was not enough (its measure
    counts the usual image budget and no agent's note; a summary and kept tail
    can still be too big): the summarizer sees those messages whole, and only
    the latest turn is kept if need be. With compaction off, or when it fails
    (a note says why), the stubs go: marked, never left out silently.

    The context to send, when no compaction changed the path (None when one did)."""
    from core.compaction.run import CompactionError, compact

    settings = turn.settings
    context = _context(turn, prelude)
    if prelude.failed or not settings.compaction.enabled or not context.stubbed_messages:
        return context
    turn.on_compact("fit")
    entry = None
    try:
        entry = await compact(
            turn.session,
            settings,
            model=prelude.model,
            summarizer=summarizer_for(prelude.model, turn.target, settings),
            trigger="fit",
            on_wait=turn.on_wait,
            overhead=turn.overhead,
        )
    except CompactionError as error:
        prelude.notes.append(f"compacting to fit the context window failed: {error}")
        prelude.failed = True
    else:
        prelude.compactions.append(entry)
    finally:
        turn.emit(CompactionEnded("fit", entry))
    return None if entry is not None else context


def _refused_as_too_long(builder) -> bool:
    """The provider said the context is too long, before any reply began."""
    error = builder.error
    return error is not None and error.kind == "context_overflow" and not builder.has_content


def _overflowed(builder, settings: Settings) -> bool:
    """Refused as too long, with compaction on: compacting may help."""
    return _refused_as_too_long(builder) and settings.compaction.enabled


async def _compact_after_overflow(
    turn: _Turn, builder, prelude: _Prelude, context: Context
) -> bool:
    """Compact once after a context overflow; True when a retry makes sense.
    When compacting fails, the builder's error says so (when there was nothing
    to compact, the newest message is what must be shortened: it says so)."""
    from core.compaction.run import CompactionError, NothingToCompact, compact

    first: ProviderError = builder.error
    turn.on_compact("overflow")
    entry = None
    try:
        entry = await compact(
            turn.session,
            turn.settings,
            model=prelude.model,
            summarizer=summarizer_for(prelude.model, turn.target, turn.settings),
            trigger="overflow",
            on_wait=turn.on_wait,
            overhead=turn.overhead,
        )
    except NothingToCompact:
        asked = [m for m in context.messages if m.role == "user"]
        newest = estimate_tokens(asked[-1]) if asked else 0
        builder.error = ProviderError(
            "context_overflow",
            f"{first.detail}; nothing earlier is left to compact: "
            f"the newest message (~{newest:,} tokens) is too long for this model by itself",
            status=first.status,
        )
        return False
    except CompactionError as error:
        builder.error = ProviderError(
            "context_overflow",
            f"{first.detail}; compacting the conversation failed too: {error}",
            status=first.status,
        )
        return False
    finally:
        turn.emit(CompactionEnded("overflow", entry))
    prelude.compactions.append(entry)
    return True


def _say_still_too_long(builder) -> None:
    error: ProviderError = builder.error
    builder.error = ProviderError(
        "context_overflow",
        f"still too long after compacting the conversation: {error.detail}",
        status=error.status,
    )
