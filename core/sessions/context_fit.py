"""The context builder's safety net (DESIGN.md, "The path and the context",
step 6): make the messages fit the token budget without leaving anything out
silently.

Messages too big for what is left of the window are sent shortened: the
middle of their longest text is replaced by a marker saying how many words
were left out, so the model still sees each one's start and end. The newest
message (the user's question, or the tool results the model asked for) is
left whole here. When shortening cannot fit (many small messages, images),
the turn compacts first (:mod:`core.chat.turn`); what is still too big goes
as stubs, and the newest is shortened only after them
(:mod:`core.sessions.context_stubs`). Either way a note says what was done.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from core.sessions.content import Block, TextContent, ToolResultContent
from core.sessions.messages import Message
from core.sessions.word_count import WordCount

KEEP_AT_LEAST = 64
"""Estimated tokens of a shortened message's text that are always kept (head and tail)."""
Estimate = Callable[[Message], int]
KINDS = {"assistant": "reply", "user": "message", "tool_result": "tool result"}


@dataclass(frozen=True)
class Fitted:
    messages: list[Message]
    shortened: tuple[tuple[Message, Message, int], ...] = ()
    """Each shortened message: as it was, as it is sent, and the words left out of it."""
    stubbed: tuple[tuple[Message, Message, int], ...] = ()
    """Each message sent as a stub: as it was, as it is sent, and the words left out of it."""
    left_out: tuple[Message, ...] = ()
    """Messages of the oldest turns replaced by one marker line (as they were)."""

    def notes(self) -> list[str]:
        notes: list[str] = []
        if self.shortened:
            described = "; ".join(_describe(m, words) for m, _, words in self.shortened[:3])
            more = f"; and {len(self.shortened) - 3} more" if len(self.shortened) > 3 else ""
            notes.append(
                f"{len(self.shortened)} message(s) sent shortened to fit the context window "
                f"(the middle left out, marked): {described}{more}"
            )
        if self.stubbed:
            notes.append(
                f"{len(self.stubbed)} older message(s) sent as stubs to fit the context window "
                "(only their start and end, images and files as notes, marked)"
            )
        if self.left_out:
            notes.append(
                f"{len(self.left_out)} oldest message(s) left out of the request to fit the "
                "context window (a line in the request says so)"
            )
        return notes


def fit_budget(messages: list[Message], budget: int, estimate: Estimate) -> Fitted:
    """The messages with their longest texts, but the newest message's,
    shortened so that their ``estimate`` sums to at most ``budget``, as far as
    shortening can do it."""
    if sum(estimate(m) for m in messages) <= budget:
        return Fitted(messages)
    return _shorten(messages, budget, estimate, frozenset({len(messages) - 1}))


def shorten_newest(fitted: Fitted, budget: int, estimate: Estimate) -> Fitted:
    """``fitted`` with its newest message shortened too, as far as it takes to
    fit ``budget`` (as it is when it fits)."""
    messages = fitted.messages
    if sum(estimate(m) for m in messages) <= budget:
        return fitted
    newest = _shorten(messages, budget, estimate, frozenset(range(len(messages) - 1)))
    return Fitted(
        newest.messages, fitted.shortened + newest.shortened, fitted.stubbed, fitted.left_out
    )


def _shorten(
    messages: list[Message], budget: int, estimate: Estimate, keep_whole: frozenset[int]
) -> Fitted:
    """Shorten the longest texts down to a common size, the largest size at which
    everything fits (or :data:`KEEP_AT_LEAST`, when nothing larger does)."""
    sizes = [
        0 if index in keep_whole else _text_tokens(message)
        for index, message in enumerate(messages)
    ]
    largest = max(sizes, default=0)
    if largest <= KEEP_AT_LEAST:
        return Fitted(messages)
    # Each message's longest text is cut at every cap tried: its words counted once.
    counts = [WordCount(max(_texts(m), key=len, default="")) for m in messages]

    def at(cap: int) -> Fitted:
        out: list[Message] = []
        shortened: list[tuple[Message, Message, int]] = []
        for message, size, count in zip(messages, sizes, counts, strict=True):
            if size > cap:
                short, words = _shorten_message(message, size - cap, count)
                if words:
                    out.append(short)
                    shortened.append((message, short, words))
                    continue
            out.append(message)
        return Fitted(out, tuple(shortened))

    low, high = KEEP_AT_LEAST, largest  # fits at `low` (or nothing does); `high` does not
    best = at(low)
    if sum(estimate(m) for m in best.messages) > budget:
        return best
    while high - low > 1:
        middle = (low + high) // 2
        candidate = at(middle)
        if sum(estimate(m) for m in candidate.messages) <= budget:
            low, best = middle, candidate
        else:
            high = middle
    return best


def _text_tokens(message: Message) -> int:
    """The estimated tokens of the message's longest text (what can be shortened)."""
    return max((len(text) for text in _texts(message)), default=0) // 4


def _texts(message: Message) -> list[str]:
    texts: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            texts.append(block.text)
        elif isinstance(block, ToolResultContent):
            texts += [c.text for c in block.content if isinstance(c, TextContent)]
    return texts


def _shorten_message(message: Message, tokens: int, count: WordCount) -> tuple[Message, int]:
    """The message with about ``tokens`` estimated tokens taken from the middle
    of its longest text (``count``'s), and the number of words left out (0: nothing was)."""
    longest = count.text
    kind = KINDS.get(message.role, "message")
    short, words = shorten_text(count, len(longest) - 4 * tokens, kind)
    if not words:
        return message, 0
    done = False

    def swap(block: TextContent) -> TextContent:
        nonlocal done
        if not done and block.text is longest:
            done = True
            return TextContent(short)
        return block

    blocks: list[Block] = []
    for block in message.content:
        if isinstance(block, TextContent):
            blocks.append(swap(block))
        elif isinstance(block, ToolResultContent):
            inner = tuple(swap(c) if isinstance(c, TextContent) else c for c in block.content)
            blocks.append(ToolResultContent(block.tool_call_id, inner, block.is_error))
        else:
            blocks.append(block)
    return message.with_(content=tuple(blocks)), words


def shorten_text(
    count: WordCount, keep_chars: int, kind: str, least: int = 4 * KEEP_AT_LEAST
) -> tuple[str, int]:
    """``count.text`` with its middle replaced by a marker so that about
    ``keep_chars`` characters of it (at least ``least``) are kept, cut between
    words; and the words left out."""
    text = count.text
    keep_chars = max(least, keep_chars)
    if keep_chars >= len(text):
        return text, 0
    head_end = text.rfind(" ", 0, keep_chars // 2)
    head_end = head_end if head_end > 0 else keep_chars // 2
    tail_start = text.find(" ", len(text) - keep_chars // 2)
    tail_start = tail_start + 1 if tail_start >= head_end else len(text) - keep_chars // 2
    words = count.between(head_end, tail_start)
    if not words:
        return text, 0
    # Text with few spaces (a hash, base64, a minified file) is counted in characters.
    chars = tail_start - head_end
    unit, amount = ("words", words) if chars < 20 * words else ("characters", chars)
    marker = f"[… {amount:,} {unit} of this {kind} left out to fit the context window …]"
    return f"{text[:head_end].rstrip()}\n\n{marker}\n\n{text[tail_start:].lstrip()}", words


def shortened_note(role: str, words: int) -> str:
    """What a shortened message's row says."""
    kind = KINDS.get(role, "message")
    return f"sent shortened: {words:,} words from the middle of this {kind} left out to fit the context window"


def _describe(message: Message, words: int) -> str:
    first = " ".join(m.group() for m in islice(re.finditer(r"\S+", message.text), 4))
    first = first if len(first) <= 40 else first[:39] + "…"
    kind = KINDS.get(message.role, "message")
    return f'{kind} "{first}…" ({words:,} words left out)'
