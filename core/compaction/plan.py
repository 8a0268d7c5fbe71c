"""Compaction as pure functions: where to cut, what to summarize, what to ask.

The path (root first) holds what the model currently sees: the latest
compaction's summary and its kept tail, or everything. A new compaction keeps
about ``keep_recent_tokens`` of the most recent conversation verbatim and
replaces the rest by a summary. The cut lands on a user or assistant message,
never on a tool result, and never between a tool call and its result. When it
falls inside a long turn (a user message followed by many assistant and tool
steps), the beginning of that turn is summarized on its own and merged in (a
"split turn"). A previous summary is updated, not discarded: it goes into the
prompt with the newly summarized messages.

I/O (the provider call, writing the entry) lives in :mod:`core.compaction.run`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from core.compaction import prompts
from core.sessions.content import ImageContent, TextContent, ToolCallContent, ToolResultContent
from core.sessions.context import estimate_tokens, latest_compaction
from core.sessions.entries import BranchSummary, Compaction, Entry
from core.sessions.messages import Message
from core.settings import CompactionSettings

TOOL_TEXT_LIMIT = 2_000
"""Characters of one tool result, thinking block or tool arguments kept in a transcript."""
SPLIT_TOLERANCE = 0.25
"""A turn is split only when keeping its beginning too would add more than this
fraction of ``keep_recent_tokens``; a short turn is kept whole."""
_UNFINISHED = {"aborted": "stopped by the user", "error": "failed", "interrupted": "cut off"}


# --- budget -----------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """Token limits for one model, from its window and the compaction settings."""

    window: int
    reserve_tokens: int
    keep_recent_tokens: int

    @property
    def threshold(self) -> int:
        """Compact above this many context tokens; also the safety net's budget."""
        return self.window - self.reserve_tokens


RESERVE_FRACTION = 4
"""``reserve_tokens`` is at most a quarter of the window: compaction starts at
three quarters of a small window (16k of an 8k model would leave nothing)."""
KEEP_FRACTION = 3
"""``keep_recent_tokens`` is at most a third of the window, so a compacted
context (summary and kept tail) is well under the threshold."""


def budget_for(window: int, settings: CompactionSettings) -> Budget:
    """The settings are caps that scale with the window: for a window W,
    compaction starts at W - min(reserve_tokens, W/4) and keeps at most
    min(keep_recent_tokens, W/3) of recent conversation."""
    window = max(1, window)
    reserve = max(0, min(settings.reserve_tokens, window // RESERVE_FRACTION))
    keep = max(0, min(settings.keep_recent_tokens, window // KEEP_FRACTION))
    return Budget(window=window, reserve_tokens=reserve, keep_recent_tokens=keep)


SUMMARY_WINDOW_FRACTION = 4
"""A summary's answer is at most a quarter of the summarizing model's window."""
MIN_SUMMARY_TOKENS = 256


def summary_max_tokens(
    wanted: int, window: int, keep_recent_tokens: int, max_output: int | None
) -> int:
    """``max_tokens`` of a summary request: ``wanted`` (a share of the reserve)
    within what the model may write, raised to a useful minimum, then held to a
    quarter of ``window`` and to the kept tail's budget, so that a summary
    never fills the room it was written to free."""
    tokens = max(MIN_SUMMARY_TOKENS, min(wanted, max_output) if max_output else wanted)
    return max(1, min(tokens, window // SUMMARY_WINDOW_FRACTION, keep_recent_tokens))


def should_compact(context_tokens: int, budget: Budget, settings: CompactionSettings) -> bool:
    return settings.enabled and context_tokens > budget.threshold


# --- cut point --------------------------------------------------------------


@dataclass(frozen=True)
class CutPoint:
    first_kept_index: int
    """Index in the path of the first entry kept verbatim (a user or assistant message)."""
    first_kept_id: str
    turn_start_index: int | None = None
    """For a split turn: the index of the user message that began the turn."""

    @property
    def split_turn(self) -> bool:
        return self.turn_start_index is not None


def entry_tokens(entry: Entry) -> int:
    """The estimated tokens an entry adds to the context (0 for what is never sent)."""
    payload = entry.payload
    if isinstance(payload, Message):
        return (
            estimate_tokens(payload) if payload.role in ("user", "assistant", "tool_result") else 0
        )
    if isinstance(payload, BranchSummary):
        return len(payload.summary) // 4 + 4
    return 0


def _role(entry: Entry) -> str | None:
    message = entry.message
    return message.role if message is not None else None


def visible_start(path: Sequence[Entry]) -> int:
    """Index of the first entry the model sees after the latest summary (0 without one)."""
    found = latest_compaction(path)
    return found[1] if found is not None else 0


def _separating(path: Sequence[Entry], start: int) -> list[bool]:
    """``blocked[i]``: cutting before ``path[i]`` would separate a tool call
    (before ``i``) from its result (at or after ``i``)."""
    depth = [0] * (len(path) + 1)
    calls: dict[str, int] = {}
    for index in range(start, len(path)):
        message = path[index].message
        if message is None:
            continue
        if message.role == "assistant":
            for call in message.tool_calls:
                calls[call.id] = index
        elif message.role == "tool_result":
            for result in message.tool_results:
                called = calls.get(result.tool_call_id)
                if called is not None:
                    depth[called + 1] += 1
                    depth[index + 1] -= 1
    blocked: list[bool] = []
    running = 0
    for index in range(len(path)):
        running += depth[index]
        blocked.append(running > 0)
    return blocked


def cut_candidates(path: Sequence[Entry], start: int = 0) -> list[int]:
    """Indices where the kept tail may begin: user or assistant messages that
    do not separate a tool call from its result."""
    blocked = _separating(path, start)
    return [
        i
        for i in range(start, len(path))
        if _role(path[i]) in ("user", "assistant") and not blocked[i]
    ]


def find_cut_point(
    path: Sequence[Entry], keep_recent_tokens: int, *, start: int | None = None
) -> CutPoint | None:
    """Where the kept tail begins so that it holds about ``keep_recent_tokens``.

    Walks back from the newest entry adding up estimated sizes; once the sum
    reaches ``keep_recent_tokens`` the cut is the nearest candidate at or after
    that entry (so the tail holds at most about that much), or the last
    candidate when none is after it. Considers entries from ``start`` (default:
    what the model sees now). None when there is no candidate at all.
    """
    if start is None:
        start = visible_start(path)
    candidates = cut_candidates(path, start)
    if not candidates:
        return None
    cut = candidates[0]
    total = 0
    for index in range(len(path) - 1, start - 1, -1):
        total += entry_tokens(path[index])
        if total >= keep_recent_tokens:
            later = [c for c in candidates if c >= index]
            cut = later[0] if later else candidates[-1]
            break
    return _settle_turn(path, cut, start, keep_recent_tokens, set(candidates))


def _settle_turn(
    path: Sequence[Entry], cut: int, start: int, keep_recent_tokens: int, candidates: set[int]
) -> CutPoint:
    """A cut at an assistant message is inside a turn: keep the whole turn when
    its beginning is short, else mark the turn as split."""
    if _role(path[cut]) != "assistant":
        return CutPoint(cut, path[cut].id)
    turn_start = next((i for i in range(cut - 1, start - 1, -1) if _role(path[i]) == "user"), None)
    if turn_start is None:
        return CutPoint(cut, path[cut].id)
    prefix = sum(entry_tokens(path[i]) for i in range(turn_start, cut))
    if turn_start in candidates and prefix <= keep_recent_tokens * SPLIT_TOLERANCE:
        return CutPoint(turn_start, path[turn_start].id)
    return CutPoint(cut, path[cut].id, turn_start_index=turn_start)


def last_turn_cut(path: Sequence[Entry], *, start: int | None = None) -> CutPoint | None:
    """Keep only the latest turn (from the last user message): what a manual
    compaction does when the whole conversation is within ``keep_recent_tokens``."""
    if start is None:
        start = visible_start(path)
    users = [i for i in cut_candidates(path, start) if _role(path[i]) == "user"]
    return CutPoint(users[-1], path[users[-1]].id) if users else None


# --- preparation ------------------------------------------------------------


@dataclass(frozen=True)
class Preparation:
    """Everything a compaction needs, decided from the path alone."""

    cut: CutPoint
    history: tuple[Entry, ...]
    """Entries to summarize (before the split turn, or before the cut)."""
    turn_prefix: tuple[Entry, ...]
    """The beginning of a split turn, summarized on its own."""
    previous_summary: str | None

    @property
    def first_kept_id(self) -> str:
        return self.cut.first_kept_id


def _summarizable(entries: Sequence[Entry]) -> tuple[Entry, ...]:
    """What a transcript shows: user, assistant and tool messages, branch summaries."""
    return tuple(
        e
        for e in entries
        if isinstance(e.payload, BranchSummary) or _role(e) in ("user", "assistant", "tool_result")
    )


def prepare(path: Sequence[Entry], cut: CutPoint | None) -> Preparation | None:
    """The entries to summarize for ``cut``; None when there is nothing to summarize."""
    if cut is None or not path:
        return None
    found = latest_compaction(path)
    start = found[1] if found is not None else 0
    payload = path[found[0]].payload if found is not None else None
    previous = payload.summary if isinstance(payload, Compaction) else None
    history_end = cut.turn_start_index if cut.split_turn else cut.first_kept_index
    history = _summarizable(path[start:history_end])
    prefix = _summarizable(path[history_end : cut.first_kept_index]) if cut.split_turn else ()
    if not history and not prefix:
        return None
    return Preparation(cut=cut, history=history, turn_prefix=prefix, previous_summary=previous)


def prepare_compaction(
    path: Sequence[Entry], keep_recent_tokens: int, *, manual: bool = False
) -> Preparation | None:
    """:func:`find_cut_point` then :func:`prepare`. A ``manual`` compaction of a
    conversation already within ``keep_recent_tokens`` keeps only the latest turn."""
    preparation = prepare(path, find_cut_point(path, keep_recent_tokens))
    if preparation is None and manual:
        preparation = prepare(path, last_turn_cut(path))
    return preparation


# --- transcript and prompts -----------------------------------------------------


def _clip(text: str, limit: int = TOOL_TEXT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters]"


def _image(image: ImageContent) -> str:
    return f"[image: {image.describe()}]"


def _call(call: ToolCallContent) -> str:
    if call.arguments:
        args = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items()
        )
    else:
        args = call.raw_arguments
    return f"{call.name}({_clip(args)})"


def _result(block: ToolResultContent) -> str:
    parts = [c.text if isinstance(c, TextContent) else _image(c) for c in block.content]
    label = "Tool error" if block.is_error else "Tool result"
    return f"[{label}]: {_clip(chr(10).join(parts))}"


def transcript_parts(entries: Sequence[Entry]) -> list[str]:
    """One part per message, in the ``[Role]: text`` form summaries are made from.
    Serializing keeps the summarizing model from continuing the conversation."""
    parts: list[str] = []
    for entry in entries:
        payload = entry.payload
        if isinstance(payload, BranchSummary):
            parts.append(f"[Summary of another branch the user explored]: {payload.summary}")
            continue
        if not isinstance(payload, Message):
            continue
        if payload.role == "user":
            pieces = [
                b.text if isinstance(b, TextContent) else _image(b)
                for b in payload.content
                if isinstance(b, (TextContent, ImageContent))
            ]
            text = "\n".join(p for p in pieces if p)
            if text:
                parts.append(f"[User]: {text}")
        elif payload.role == "assistant":
            who = payload.agent or "Assistant"  # a round table says who said what
            thinking = "\n".join(b.text for b in payload.thinking if not b.redacted and b.text)
            if thinking:
                parts.append(f"[{who} thinking]: {_clip(thinking)}")
            text = "\n".join(
                b.text for b in payload.content if isinstance(b, TextContent) and b.text
            )
            if text:
                parts.append(f"[{who}]: {text}")
            if payload.tool_calls:
                parts.append(
                    f"[{who} tool calls]: " + "; ".join(_call(c) for c in payload.tool_calls)
                )
            if payload.stop_reason in _UNFINISHED:
                parts.append(f"[This reply was {_UNFINISHED[payload.stop_reason]}]")
        elif payload.role == "tool_result":
            parts.extend(_result(b) for b in payload.tool_results)
    return parts


def serialize_transcript(entries: Sequence[Entry], max_chars: int | None = None) -> str:
    """The transcript text; with ``max_chars``, the oldest parts are left out
    (and said to be) so the request fits the summarizing model."""
    parts = transcript_parts(entries)
    if max_chars is not None:
        size = sum(len(p) + 2 for p in parts)
        dropped = 0
        while parts and size > max_chars and len(parts) > 1:
            size -= len(parts.pop(0)) + 2
            dropped += 1
        if dropped:
            parts.insert(
                0, f"[... {dropped} earlier message(s) left out to fit the summarizing model ...]"
            )
        if parts and len(parts[-1]) > max_chars:
            parts[-1] = parts[-1][-max_chars:]
    return "\n\n".join(parts)


def transcript_chunks(entries: Sequence[Entry], max_chars: int) -> list[str]:
    """The whole transcript in pieces of at most about ``max_chars``, in order,
    for a summary made one piece at a time: nothing is left out. A message
    longer than a piece is cut between words, its later pieces labelled as its
    continuation."""
    pieces: list[str] = []
    for part in transcript_parts(entries):
        pieces.extend(_split_part(part, max(200, max_chars)))
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 2 + len(piece) <= max_chars:
            chunks[-1] += "\n\n" + piece
        else:
            chunks.append(piece)
    return chunks


def _split_part(part: str, limit: int) -> list[str]:
    if len(part) <= limit:
        return [part]
    label, sep, _ = part.partition("]: ")
    continued = (
        f"{label}, continued]: " if sep and label.startswith("[") and len(label) < 60 else ""
    )
    out: list[str] = []
    rest = part
    while len(rest) > limit:
        room = limit - len(continued)
        cut = rest.rfind(" ", room // 2, room)
        cut = cut if cut > 0 else room
        out.append(rest[:cut])
        rest = continued + rest[cut:].lstrip(" ")
    out.append(rest)
    return out


def summary_prompt(
    transcript: str, *, previous_summary: str | None = None, focus: str | None = None
) -> str:
    """The user message asking for a (new or updated) summary of ``transcript``."""
    text = f"<conversation>\n{transcript}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    text += prompts.UPDATE if previous_summary else prompts.SUMMARIZE
    if focus:
        text += "\n\n" + prompts.FOCUS.format(focus=focus)
    return text


def turn_prefix_prompt(
    transcript: str, *, previous_summary: str | None = None, focus: str | None = None
) -> str:
    """The user message asking for a summary of a split turn's beginning (the
    next piece of it, when ``previous_summary`` holds the summary of the pieces before)."""
    text = f"<conversation>\n{transcript}\n</conversation>\n\n"
    if previous_summary:
        text += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
        text += prompts.TURN_PREFIX_CONTINUED + "\n\n"
    text += prompts.TURN_PREFIX
    if focus:
        text += "\n\n" + prompts.FOCUS.format(focus=focus)
    return text


def request_messages(prompt: str) -> tuple[Message, ...]:
    return (Message(role="user", content=(TextContent(prompt),)),)


def merge_summaries(history: str | None, turn_prefix: str | None) -> str:
    """One summary from the history's and a split turn's beginning's."""
    if turn_prefix is None:
        return history or ""
    return (history or prompts.NO_PRIOR_HISTORY) + prompts.SPLIT_TURN_JOINER + turn_prefix
