"""Compaction's I/O: ask a model for the summary, append the ``compaction`` entry.

:func:`compact` is the manual ``/compact`` (and ``tangents sessions compact``);
:func:`maybe_compact` runs before every turn and compacts when the context is
over ``window - reserve_tokens``. The decisions are the pure functions of
:mod:`core.compaction.plan`; this module only talks to the provider and the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

from core.compaction import plan, prompts
from core.compaction.plan import Budget, Preparation
from core.compaction.summarizer import Summarizer
from core.providers.base import ChatRequest
from core.providers.complete import CompletionError, complete_text
from core.providers.retry import OnWait
from core.providers.slots import slots_for
from core.sessions.context import build_context, estimated_tokens
from core.sessions.entries import Compaction, Entry
from core.sessions.messages import Usage
from core.sessions.session import Session
from core.settings import Settings
from core.tokens import (
    context_tokens,
    context_window,
    max_output_tokens,
    split_usage,
    upper_bound_tokens,
)

Trigger = Literal["manual", "auto", "fit", "overflow"]
"""Why a compaction runs: asked for; over the threshold; older messages would
otherwise go only as stubs (a manual compaction's cut, without its size check);
the provider refused the context."""

CHARS_PER_TOKEN = 4
"""The estimate used everywhere else, for fitting a transcript into the summarizing model's window."""
MIN_TRANSCRIPT_CHARS = 8_000
"""The least transcript a summary request carries, unless a quarter of the
window is less (a small window cannot hold 8,000 characters beside the rest)."""


class CompactionError(Exception):
    """A compaction that could not be done; the message says why, for the user."""


class NothingToCompact(CompactionError):
    """The path has nothing before its kept tail (or was just compacted)."""


def budget(model: str, settings: Settings, overhead: int = 0) -> Budget:
    """Window, reserve and kept tail for ``model`` under ``settings``, for the
    messages of a request whose system prompt and tool definitions take
    ``overhead`` tokens of the window (at most half of it is given to them)."""
    window = context_window(model, settings.context_windows)
    return plan.budget_for(max(window // 2, window - overhead), settings.compaction)


async def compact(
    session: Session,
    settings: Settings,
    *,
    model: str,
    summarizer: Summarizer,
    focus: str | None = None,
    trigger: Trigger = "manual",
    on_wait: OnWait | None = None,
    overhead: int = 0,
) -> Entry:
    """Summarize the session's path up to its cut point and append a
    ``compaction`` entry at the leaf. ``model`` is the conversation's model;
    ``summarizer`` writes the summary (``compaction_model`` when set). A manual
    compaction of a short conversation keeps only the latest turn.

    Raises :class:`CompactionError` (nothing to compact, the summary request
    failed); nothing is written then.
    """
    path = session.path
    limits = budget(model, settings, overhead)
    keep = limits.keep_recent_tokens
    if trigger == "overflow":
        # The provider's window is smaller than we thought: keep at most half
        # of the messages it refused (its usage counted the overhead too).
        keep = min(keep, max(0, context_tokens(path, model, exact=False) - overhead) // 2)
    preparation = plan.prepare_compaction(path, keep, manual=trigger != "auto")
    if preparation is None:
        raise NothingToCompact(
            "nothing to compact yet: the conversation has no earlier part to summarize"
        )
    counting = asyncio.ensure_future(asyncio.to_thread(context_tokens, path, model))
    try:
        summary, details = await _summarize(
            settings, preparation, limits, summarizer, focus, on_wait
        )
        tokens_before = await counting
    finally:
        counting.cancel()
    if trigger == "manual" and not _smaller(session, preparation, summary, model):
        raise NothingToCompact(
            "nothing to compact yet: a summary would not make the context smaller"
        )
    return await _append(
        session, preparation, summary, tokens_before, {**details, "trigger": trigger}
    )


async def maybe_compact(
    session: Session,
    settings: Settings,
    *,
    model: str,
    summarizer: Summarizer,
    on_compact: Callable[[str], None] | None = None,
    on_wait: OnWait | None = None,
    overhead: int = 0,
) -> Entry | None:
    """Compact when automatic compaction is on and the context is over
    ``window - reserve_tokens``; None when nothing was done.

    A cheap upper bound is checked first, so litellm's counter (slow to
    import) runs only near the limit. Raises :class:`CompactionError` when a
    compaction was needed but failed.
    """
    if not settings.compaction.enabled:
        return None
    path = session.path
    if not path or isinstance(path[-1].payload, Compaction):
        return None
    limits = budget(model, settings, overhead)
    # The provider's reported usage counts what it was sent, which may be less
    # than the path (thinking left out, or messages the safety net stubbed): the
    # safety net's own estimate of the path counts too, so compaction runs
    # before anything is stubbed.
    sent = estimated_tokens(session.context(model).messages)
    if max(sent, upper_bound_tokens(path, model) - overhead) <= limits.threshold:
        return None
    # A reported usage counted all but the newest messages exactly (and the
    # overhead with them): the estimate of those few is enough, and saves
    # importing litellm's counter (seconds) in every print-mode run.
    exact = split_usage(path, model).reported == 0
    counted = await asyncio.to_thread(context_tokens, path, model, exact=exact)
    tokens = max(sent, counted - (0 if exact else overhead))
    if not plan.should_compact(tokens, limits, settings.compaction):
        return None
    preparation = plan.prepare_compaction(path, limits.keep_recent_tokens)
    if preparation is None:
        return None
    if on_compact is not None:
        on_compact("auto")
    summary, details = await _summarize(settings, preparation, limits, summarizer, None, on_wait)
    return await _append(session, preparation, summary, tokens, {**details, "trigger": "auto"})


async def _append(
    session: Session, preparation: Preparation, summary: str, tokens_before: int, details: dict
) -> Entry:
    payload = Compaction(
        summary=summary,
        first_kept_id=preparation.first_kept_id,
        tokens_before=tokens_before,
        details=details,
    )
    # A cancellation now (Esc) must not leave the entry saved but missing from the session's path.
    return await asyncio.shield(session.append(payload))


def _smaller(session: Session, preparation: Preparation, summary: str, model: str) -> bool:
    """Would the context be smaller with this summary in place of what it replaces?"""
    path = session.path
    draft = Entry.new(
        session.id,
        path[-1].id,
        Compaction(summary=summary, first_kept_id=preparation.first_kept_id, tokens_before=0),
    )
    before = estimated_tokens(build_context(path, model).messages)
    return estimated_tokens(build_context([*path, draft], model).messages) < before


async def _summarize(
    settings: Settings,
    preparation: Preparation,
    limits: Budget,
    summarizer: Summarizer,
    focus: str | None,
    on_wait: OnWait | None,
) -> tuple[str, dict]:
    summary_model, target = summarizer.model, summarizer.target
    max_out = max_output_tokens(summary_model)
    window = context_window(summary_model, settings.context_windows)

    def reply_tokens(share: float) -> int:
        wanted = int(share * limits.reserve_tokens)
        return plan.summary_max_tokens(wanted, window, limits.keep_recent_tokens, max_out)

    history_tokens, prefix_tokens = reply_tokens(0.8), reply_tokens(0.5)
    # The transcript gets what the summarizing model's window leaves after the
    # reply and the instructions (with the previous summary).
    instructions = len(prompts.SYSTEM) + len(
        plan.summary_prompt("", previous_summary=preparation.previous_summary, focus=focus)
    )
    reply = history_tokens
    room = window - reply - instructions // CHARS_PER_TOKEN
    least = min(MIN_TRANSCRIPT_CHARS, window * CHARS_PER_TOKEN // 4)
    max_chars = max(least, room * CHARS_PER_TOKEN)
    # When it takes several pieces, a later piece's prompt also carries the
    # summary of the pieces before it.
    piece_chars = max(least, (room - reply) * CHARS_PER_TOKEN)

    def pieces(entries: tuple[Entry, ...]) -> list[str]:
        whole = plan.transcript_chunks(entries, max_chars)
        return whole if len(whole) <= 1 else plan.transcript_chunks(entries, piece_chars)

    def request(prompt: str, max_tokens: int) -> ChatRequest:
        return ChatRequest(
            model=target.model,
            messages=plan.request_messages(prompt),
            system=prompts.SYSTEM,
            max_tokens=max_tokens,
            api_base=target.api_base,
            api_key=target.api_key,
            # a stream that ends before a word is then the window refusing it
            near_window=3 * (len(prompt) + len(prompts.SYSTEM)) // CHARS_PER_TOKEN >= window,
            slots=slots_for(target, settings),
            pace=settings.pace,
        )

    # One request at a time: a single-slot local server cuts off (or queues) a
    # request that arrives while another runs. A transcript too long for one
    # request goes in pieces, each updating the summary of those before it.
    usage: Usage | None = None

    async def ask(prompt: str, max_tokens: int) -> str:
        nonlocal usage
        text, used = await _complete(request(prompt, max_tokens), summary_model, settings, on_wait)
        if used is not None:
            usage = used if usage is None else usage + used
        return text

    history = preparation.previous_summary
    for piece in pieces(preparation.history):
        history = await ask(
            plan.summary_prompt(piece, previous_summary=history, focus=focus), history_tokens
        )
    prefix = None
    for piece in pieces(preparation.turn_prefix):
        prefix = await ask(
            plan.turn_prefix_prompt(piece, previous_summary=prefix, focus=focus), prefix_tokens
        )
    details: dict = {
        "model": summary_model,
        "focus": focus,
        "split_turn": preparation.cut.split_turn,
    }
    if usage is not None:
        details["usage"] = usage.to_dict()
    return plan.merge_summaries(history, prefix), details


async def _complete(
    request: ChatRequest, model: str, settings: Settings, on_wait: OnWait | None
) -> tuple[str, Usage | None]:
    try:
        return await complete_text(request, model, settings, on_wait)
    except CompletionError as error:
        raise CompactionError(str(error)) from None
