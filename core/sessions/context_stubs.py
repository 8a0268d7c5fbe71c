"""The safety net's last resort (DESIGN.md, "The path and the context", step
6): when shortening every message still does not fit the budget (many small
messages, images, a tiny window), the oldest messages go as stubs, never left
out whole.

A stub keeps the start and end of each text around a marker saying how many
words were left out; an image or a file becomes a one-line note naming it;
thinking is left out (the model's own notes, not the conversation); tool calls
stay as they are, so each still has its result. The newest turn (the user's
question, or the tool results the model asked for) and a compaction's summary
are never stubbed; the newest message is shortened only when that is all it
takes, or nothing else is left. Only when even the stubs do not fit are the
oldest turns replaced by one line that says how many messages were left out:
the request itself still says so.
"""

from __future__ import annotations

from core.sessions.content import (
    Block,
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolResultContent,
)
from core.sessions.context_fit import (
    KINDS,
    Estimate,
    Fitted,
    fit_budget,
    shorten_newest,
    shorten_text,
)
from core.sessions.messages import Message
from core.sessions.word_count import WordCount

STUB_CHARS = 120
"""Characters of a stubbed text that are kept: its start and its end."""


def fit(messages: list[Message], budget: int, estimate: Estimate, protected: int = 0) -> Fitted:
    """The messages fitted to ``budget``, each step only when the ones before
    it were not enough: the longest texts but the newest message's shortened;
    the oldest messages stubbed; the newest shortened too, when that is all
    it takes; the oldest turns counted on one line; the newest shortened
    after all (the newest turn alone is too big). The first ``protected``
    messages (a compaction's summary) may be shortened, never stubbed."""
    fitted = fit_budget(messages, budget, estimate)
    if _fits(fitted, budget, estimate):
        return fitted
    fitted = _stub_oldest(fitted, budget, estimate, protected)
    if _fits(fitted, budget, estimate):
        return fitted
    shorter = shorten_newest(fitted, budget, estimate)
    if _fits(shorter, budget, estimate):
        return shorter
    fitted = _leave_out_oldest(fitted, budget, estimate, protected)
    return shorten_newest(fitted, budget, estimate)


def _fits(fitted: Fitted, budget: int, estimate: Estimate) -> bool:
    return sum(estimate(m) for m in fitted.messages) <= budget


def _originals(fitted: Fitted) -> list[Message]:
    """Each message of ``fitted`` as it was before it was shortened or stubbed."""
    was = {id(new): old for old, new, _ in fitted.shortened + fitted.stubbed}
    return [was.get(id(m), m) for m in fitted.messages]


def _stub_oldest(fitted: Fitted, budget: int, estimate: Estimate, protected: int) -> Fitted:
    """The oldest messages after the ``protected`` ones, but not the newest
    turn's, stubbed, oldest first, until the estimate fits ``budget``."""
    messages = list(fitted.messages)
    originals = _originals(fitted)
    sizes = [estimate(m) for m in messages]
    total = sum(sizes)
    stubbed: list[tuple[Message, Message, int]] = []
    for index in range(protected, _last_turn_start(messages, protected)):
        if total <= budget:
            break
        short, words = stub(originals[index])  # its words counted from the saved text
        if short is originals[index] or estimate(short) >= sizes[index]:
            continue
        total += estimate(short) - sizes[index]
        messages[index], sizes[index] = short, estimate(short)
        stubbed.append((originals[index], short, words))
    sent = {id(m) for m in messages}
    shortened = tuple(s for s in fitted.shortened if id(s[1]) in sent)
    return Fitted(messages, shortened, tuple(stubbed), fitted.left_out)


def _leave_out_oldest(fitted: Fitted, budget: int, estimate: Estimate, protected: int) -> Fitted:
    """The oldest turns after the ``protected`` messages replaced by one line
    that counts them, until the estimate fits ``budget`` (or only the newest
    turn is left). A turn starts at a user message, so a call never loses its
    result."""
    messages = fitted.messages
    sizes = [estimate(m) for m in messages]
    last_turn = _last_turn_start(messages, protected)
    total = sum(sizes)
    end = protected
    marker = 0
    while total + marker > budget and end < last_turn:
        nxt = end + 1
        while nxt < last_turn and messages[nxt].role != "user":
            nxt += 1
        total -= sum(sizes[end:nxt])
        end = nxt
        marker = estimate(_marker(end - protected))
    if end == protected:
        return fitted
    kept = [*messages[:protected], _marker(end - protected), *messages[end:]]
    sent = {id(m) for m in kept}
    return Fitted(
        kept,
        tuple(s for s in fitted.shortened if id(s[1]) in sent),
        tuple(s for s in fitted.stubbed if id(s[1]) in sent),
        fitted.left_out + tuple(_originals(fitted)[protected:end]),
    )


def stub(message: Message) -> tuple[Message, int]:
    """The message as a stub, and the words left out of its texts (the message
    itself when a stub would be no smaller)."""
    kind = KINDS.get(message.role, "message")
    words = 0

    def text(block: TextContent) -> TextContent:
        nonlocal words
        short, left_out = shorten_text(WordCount(block.text), STUB_CHARS, kind, least=STUB_CHARS)
        if not left_out or len(short) >= len(block.text):
            return block
        words += left_out
        return TextContent(short)

    def inner(block: TextContent | ImageContent) -> TextContent | ImageContent:
        return text(block) if isinstance(block, TextContent) else _note("image", block.describe())

    blocks: list[Block] = []
    for block in message.content:
        if isinstance(block, TextContent):
            blocks.append(text(block))
        elif isinstance(block, ImageContent):
            blocks.append(_note("image", block.describe()))
        elif isinstance(block, FileContent):
            blocks.append(_note("file", block.describe()))
        elif isinstance(block, ToolResultContent):
            parts = tuple(inner(part) for part in block.content)
            blocks.append(ToolResultContent(block.tool_call_id, parts, block.is_error))
        elif not isinstance(block, ThinkingContent):
            blocks.append(block)
    if all(a is b for a, b in zip(blocks, message.content, strict=False)) and len(blocks) == len(
        message.content
    ):
        return message, 0
    return message.with_(content=tuple(blocks)), words


def stubbed_note(role: str, words: int) -> str:
    """What a stubbed message's row says."""
    kind = KINDS.get(role, "message")
    if not words:
        return (
            f"sent as a stub: the images and files of this {kind} as notes, "
            "to fit the context window"
        )
    return (
        f"sent as a stub: only the start and end of this {kind} ({words:,} words left out), "
        "images and files as notes, to fit the context window"
    )


def _note(kind: str, described: str) -> TextContent:
    return TextContent(f"[{kind} left out to fit the context window: {described}]")


def _last_turn_start(messages: list[Message], protected: int) -> int:
    """Where the newest turn starts: its user message (a tool result belongs to
    the turn of the question that led to it); right after the ``protected``
    messages when there is none (a kept tail that begins inside a turn)."""
    for index in range(len(messages) - 1, protected - 1, -1):
        if messages[index].role == "user":
            return index
    return protected


def _marker(count: int) -> Message:
    noun = "message" if count == 1 else "messages"
    return Message(
        role="user",
        content=(
            TextContent(
                f"[{count} earlier {noun} left out to fit the context window; "
                "the conversation is saved in full]"
            ),
        ),
    )
