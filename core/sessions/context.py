"""Build what is sent to the model from a path of entries: a pure function.

Steps (DESIGN.md, "The path and the context"): model and thinking level from
the latest ``model_change``; the latest compaction's summary then its kept
tail; branch summaries as user messages, custom messages left out; provider
rules (thinking signatures, tool-call ids, unpaired calls and results, aborted
turns); the image budget; a safety net that shortens messages, then sends the
oldest as marked stubs, when the estimate still exceeds the budget; and,
last, the pinned notes (core/sessions/note.py): the session's, then the
asked agent's own, placed among the messages as they are sent.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from core.sessions.content import (
    Block,
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.context_fit import Fitted, shortened_note
from core.sessions.context_stubs import fit, stubbed_note
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange
from core.sessions.file_budget import apply_file_budget, file_shas, file_tokens
from core.sessions.messages import Message
from core.sessions.note import active_note, note_text, pin_note
from core.sessions.speakers import Hearing, Speaker

SUMMARY_PREFIX = (
    "The conversation before this point was compacted. Summary of what happened so far:\n\n"
)
BRANCH_PREFIX = (
    "The user explored another branch of this conversation, then came back here. "
    "Summary of that branch:\n\n"
)
SUMMARY_END = "\n\n[End of the summary.]"
BRANCH_END = "\n\n[End of the summary of that branch.]"
"""Where a summary ends: it shares its user message with what follows it."""
UNFINISHED_TOOL_RESULT = "The tool call did not complete: no result was recorded."
_UNFINISHED_STOPS = ("aborted", "error", "interrupted")
_TOOL_ID_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Context:
    messages: tuple[Message, ...]
    system: str | None
    model: str
    thinking: str
    notes: tuple[str, ...] = ()
    """What the builder had to do that the user should know (e.g. stubbed turns)."""
    stubbed_messages: int = 0
    """Older messages sent as stubs, or left out with a marker line, to fit the
    budget: what a turn compacts first to avoid (:mod:`core.chat.turn`)."""
    shortened_messages: int = 0
    """Messages sent with the middle of a text left out (and a marker saying so)."""
    left_out: dict[str, str] = field(default_factory=dict)
    """What the user should see on an entry of the path that is not sent as it
    is (shortened or left out), by entry id."""
    image_shas: tuple[str, ...] = field(default=())
    """Images sent as pixels; their bytes must be resolved for the request."""
    file_shas: tuple[str, ...] = field(default=())
    """Files (audio, PDF) sent as data; their bytes must be resolved too."""


def estimated_tokens(messages: Sequence[Message]) -> int:
    """What the safety net measures (step 6): automatic compaction compares
    the same figure with its threshold, so it always runs first."""
    return sum(estimate_tokens(m) for m in messages)


def estimate_tokens(message: Message) -> int:
    """A cheap estimate: ~4 characters a token; an image ~1,000 tokens."""
    chars = 0
    images = 0
    for block in message.content:
        if isinstance(block, TextContent):
            chars += len(block.text)
        elif isinstance(block, ThinkingContent):
            chars += len(block.text)
        elif isinstance(block, ToolCallContent):
            chars += len(block.raw_arguments) + len(block.name)
        elif isinstance(block, ToolResultContent):
            for inner in block.content:
                if isinstance(inner, TextContent):
                    chars += len(inner.text)
                else:
                    images += 1
        elif isinstance(block, ImageContent):
            images += 1
        elif isinstance(block, FileContent):
            chars += 4 * file_tokens(block)
    return chars // 4 + 1_000 * images + 4


def current_model(
    path: Sequence[Entry], default_model: str, default_thinking: str = "off"
) -> tuple[str, str]:
    for entry in reversed(path):
        if isinstance(entry.payload, ModelChange):
            return entry.payload.model, entry.payload.thinking
    return default_model, default_thinking


def saved_endpoint(path: Sequence[Entry], model: str) -> str | None:
    """The base URL the latest model change saved for ``model``, if it was used at one."""
    for entry in reversed(path):
        payload = entry.payload
        if isinstance(payload, ModelChange) and payload.model == model:
            return payload.api_base
    return None


def system_prompt(path: Sequence[Entry]) -> str | None:
    """The latest system message on the path."""
    for entry in reversed(path):
        message = entry.message
        if message is not None and message.role == "system":
            return message.text
    return None


def build_context(
    path: Sequence[Entry],
    default_model: str,
    *,
    default_thinking: str = "off",
    image_budget: int = 3,
    refused: Collection[str] = (),
    token_budget: int | None = None,
    speaker: Speaker | None = None,
) -> Context:
    """``refused``: kinds of attachment (``image``, ``audio``, ``pdf``) the
    model does not take, sent as their one-line notes.

    ``speaker`` names who is asked on a round table (see
    :mod:`core.sessions.speakers`): an agent's model, thinking level and system
    prompt are its own (``default_model``/``default_thinking``, ``speaker.system``),
    whatever the path says."""
    speaker = speaker or Speaker()
    if speaker.agent is None:
        model, thinking = current_model(path, default_model, default_thinking)
        system = system_prompt(path)
    else:
        model, thinking, system = default_model, default_thinking, speaker.system
    messages, origins = _visible_messages(path, speaker)
    messages = _apply_provider_rules(messages, model)
    messages, image_shas = _apply_image_budget(messages, 0 if "image" in refused else image_budget)
    messages, sent_files = apply_file_budget(messages, image_budget, refused)
    notes: list[str] = []
    stubbed = shortened = 0
    left_out: dict[str, str] = {}
    pinned = [note for note in (active_note(path), speaker.note) if note and note.active]
    if token_budget is not None:
        protected = 1 if messages and messages[0].text.startswith(SUMMARY_PREFIX) else 0
        # The notes are pinned after the fit: their room is kept for them.
        notes_room = sum(
            estimate_tokens(Message(role="user", content=(TextContent(note_text(note)),)))
            for note in pinned
        )
        room = token_budget - notes_room
        fitted = fit(messages, room, estimate_tokens, protected)
        messages, shortened = fitted.messages, len(fitted.shortened)
        stubbed = len(fitted.stubbed) + len(fitted.left_out)
        notes += fitted.notes()
        left_out = _left_out_by_entry(path, fitted, origins)
        if stubbed:
            image_shas = _pixel_images(messages)
            sent_files = file_shas(messages)
    messages = pin_note(pin_note(alternate(messages), active_note(path)), speaker.note)
    return Context(
        messages=tuple(messages),
        system=system,
        model=model,
        thinking=thinking,
        notes=tuple(notes),
        stubbed_messages=stubbed,
        shortened_messages=shortened,
        left_out=left_out,
        image_shas=image_shas,
        file_shas=sent_files,
    )


def alternate(messages: Sequence[Message]) -> list[Message]:
    """Strict chat templates refuse two user (or assistant) turns in a row:
    consecutive ones become one message holding every part, in order. A user
    message with nothing to send is left out (it would vanish on the wire and
    leave its neighbours side by side)."""
    out: list[Message] = []
    for message in messages:
        if message.role == "user" and not _sendable(message):
            continue
        previous = out[-1] if out else None
        if (
            previous is not None
            and previous.role == message.role
            and message.role in ("user", "assistant")
            and not previous.tool_calls
        ):
            out[-1] = previous.with_(content=previous.content + message.content)
        else:
            out.append(message)
    return out


def _sendable(message: Message) -> bool:
    return any(not isinstance(block, TextContent) or block.text for block in message.content)


def _left_out_by_entry(path: Sequence[Entry], fitted: Fitted, origins: Origins) -> dict[str, str]:
    """The safety net's work, said on the entries it changed. A message is found
    as the entry it was made from (a summary's too), or, when a provider rule
    rebuilt it, the entry with the same role and text."""
    changes = [(old, shortened_note(old.role, words)) for old, _, words in fitted.shortened]
    changes += [(old, stubbed_note(old.role, words)) for old, _, words in fitted.stubbed]
    changes += [
        (old, "left out of the request to fit the context window (a line there says so)")
        for old in fitted.left_out
    ]
    if not changes:
        return {}
    by_text: dict[tuple[str, str], str] = {}
    for e in path:  # the last entry with a role and text wins, as it is the newest
        if isinstance(e.payload, Message):
            by_text[(e.payload.role, e.payload.text)] = e.id
    by_id: dict[str, str] = {}
    for old, note in changes:
        origin = origins.get(id(old))
        entry_id = origin[1] if origin is not None else by_text.get((old.role, old.text))
        if entry_id is not None:
            by_id[entry_id] = note
    return by_id


def latest_compaction(path: Sequence[Entry]) -> tuple[int, int] | None:
    """``(index of the latest compaction, index of its first kept entry)`` on the
    path, or None. The kept tail starts right after the compaction when its
    ``first_kept_id`` is not an earlier entry of the path."""
    for index in range(len(path) - 1, -1, -1):
        payload = path[index].payload
        if isinstance(payload, Compaction):
            for probe in range(index):
                if path[probe].id == payload.first_kept_id:
                    return index, probe
            return index, index + 1
    return None


Origins = dict[int, tuple[Message, str]]
"""The entry each message of the context was made from, by ``id()`` of the
message (held, so that no id is reused while the context is built)."""


def _visible_messages(path: Sequence[Entry], speaker: Speaker) -> tuple[list[Message], Origins]:
    """Steps 2-3: compaction summary and kept tail, branch summaries, no
    custom/system; each message as ``speaker`` hears it, and where it came from."""
    start = 0
    summary: Message | None = None
    found = latest_compaction(path)
    if found is not None:
        compaction_index, start = found
        payload = path[compaction_index].payload
        assert isinstance(payload, Compaction)
        summary = Message(
            role="user", content=(TextContent(SUMMARY_PREFIX + payload.summary + SUMMARY_END),)
        )
    out: list[Message] = []
    origins: Origins = {}

    def add(message: Message, entry: Entry) -> None:
        out.append(message)
        origins[id(message)] = (message, entry.id)

    if summary is not None:
        add(summary, path[compaction_index])
    remap = speaker.agent is not None or any(
        e.message is not None and e.message.agent for e in path[start:]
    )
    hearing = Hearing(speaker, remap)
    for index in range(start, len(path)):
        entry = path[index]
        if summary is not None and index == compaction_index:
            continue
        payload = entry.payload
        if isinstance(payload, Message):
            if payload.role in ("user", "assistant", "tool_result"):
                heard = hearing.hear(payload)
                if heard is not None:
                    add(heard, entry)
        elif isinstance(payload, BranchSummary):
            text = BRANCH_PREFIX + payload.summary + BRANCH_END
            add(Message(role="user", content=(TextContent(text),)), entry)
        elif isinstance(payload, Compaction):
            # An older compaction inside the kept tail: its summary was folded
            # into the newer one, so it adds nothing.
            continue
    return out, origins


def normalize_tool_id(tool_id: str) -> str:
    if _TOOL_ID_OK.match(tool_id):
        return tool_id
    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", tool_id)[:64]
    return cleaned or "tool_call"


def _apply_provider_rules(messages: list[Message], model: str) -> list[Message]:
    """Step 4. Output: assistant turns with calls are always followed by one
    tool_result message answering every call, in order."""
    out: list[Message] = []
    pending: list[ToolCallContent] = []  # calls of the last assistant turn awaiting results
    results: dict[str, ToolResultContent] = {}

    def flush_results() -> None:
        nonlocal pending, results
        if pending:
            blocks = tuple(
                results.get(call.id)
                or ToolResultContent(call.id, (TextContent(UNFINISHED_TOOL_RESULT),), is_error=True)
                for call in pending
            )
            out.append(Message(role="tool_result", content=blocks))
        pending = []
        results = {}

    for message in messages:
        if message.role == "tool_result":
            for block in message.content:
                if isinstance(block, ToolResultContent):
                    tool_id = normalize_tool_id(block.tool_call_id)
                    if any(call.id == tool_id for call in pending):
                        results[tool_id] = ToolResultContent(tool_id, block.content, block.is_error)
            continue
        flush_results()
        if message.role == "assistant":
            answer = _assistant_for(message, model)
            if answer is None:
                continue
            message = answer
            pending = list(message.tool_calls)
        out.append(message)
    flush_results()
    return out


def _assistant_for(message: Message, model: str) -> Message | None:
    same_model = message.model == model
    unfinished = message.stop_reason in _UNFINISHED_STOPS
    blocks: list[Block] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if same_model:
                blocks.append(block)
        elif isinstance(block, ToolCallContent):
            if not unfinished:
                tool_id = normalize_tool_id(block.id)
                blocks.append(
                    block
                    if tool_id == block.id
                    else ToolCallContent(tool_id, block.name, block.arguments, block.raw_arguments)
                )
        elif isinstance(block, TextContent):
            if block.text:
                blocks.append(block)
        else:
            blocks.append(block)
    if not any(not isinstance(b, ThinkingContent) for b in blocks):
        # Nothing but thinking (or nothing at all): an empty turn is not valid to send.
        return None
    if len(blocks) == len(message.content) and all(
        kept is block for kept, block in zip(blocks, message.content, strict=True)
    ):
        return message  # every block as it was: no new message for each turn to build
    return message.with_(content=tuple(blocks))


def _image_note(image: ImageContent) -> TextContent:
    return TextContent(f"[image omitted: {image.describe()}]")


def _apply_image_budget(
    messages: list[Message], budget: int
) -> tuple[list[Message], tuple[str, ...]]:
    """Step 5: the most recent ``budget`` distinct images go as pixels, each once."""
    keep: set[tuple[int, int, int]] = set()  # (message, block, inner) positions sent as pixels
    chosen: list[str] = []
    for m_index in range(len(messages) - 1, -1, -1):
        content = messages[m_index].content
        for b_index in range(len(content) - 1, -1, -1):
            block = content[b_index]
            if isinstance(block, ImageContent):
                positions = [(block, -1)]
            elif isinstance(block, ToolResultContent):
                positions = [
                    (inner, i)
                    for i, inner in reversed(list(enumerate(block.content)))
                    if isinstance(inner, ImageContent)
                ]
            else:
                continue
            for image, i_index in positions:
                if image.sha256 in chosen or len(chosen) >= budget:
                    continue
                chosen.append(image.sha256)
                keep.add((m_index, b_index, i_index))
    out: list[Message] = []
    for m_index, message in enumerate(messages):
        if not message.images:
            out.append(message)
            continue
        blocks: list[Block] = []
        for b_index, block in enumerate(message.content):
            if isinstance(block, ImageContent):
                blocks.append(block if (m_index, b_index, -1) in keep else _image_note(block))
            elif isinstance(block, ToolResultContent):
                inner = tuple(
                    c
                    if not isinstance(c, ImageContent) or (m_index, b_index, i) in keep
                    else _image_note(c)
                    for i, c in enumerate(block.content)
                )
                blocks.append(ToolResultContent(block.tool_call_id, inner, block.is_error))
            else:
                blocks.append(block)
        out.append(message.with_(content=tuple(blocks)))
    return out, tuple(reversed(chosen))


def _pixel_images(messages: Sequence[Message]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(image.sha256 for m in messages for image in m.images))
