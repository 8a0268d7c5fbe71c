"""A note pinned at a depth of every request: pure functions.

The newest :class:`~core.sessions.entries.Note` entry of the path is the one in
force; a note with no text turns it off. It is sent as a ``[Note: TEXT]``
user-role item. An agent of a round table may have a note of its own
(``[[agents]]`` ``note``), pinned the same way in its requests only.

Depth counts the messages of the request as the model sees them: the
messages of :class:`~core.sessions.context.Context` after consecutive
same-role messages are merged, not entries. With depth N the note is the last
part of the user message that has exactly N messages after it. A separate
note item would put two user turns side by side, so it always joins a user
message. When the message in that place is the model's (an assistant turn or
tool results, which with alternating turns happens when N is odd), the note
joins the nearest earlier user message instead, which has more than N after
it. When there is no such message (the request holds N messages or fewer),
the note opens the request: the first part of its first message if that is
the user's, else a user message of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.sessions.content import TextContent
from core.sessions.entries import Entry, Note
from core.sessions.messages import Message


def active_note(path: Sequence[Entry]) -> Note | None:
    """The note in force on ``path``: its newest note entry, unless that one is off."""
    for entry in reversed(path):
        if isinstance(entry.payload, Note):
            return entry.payload if entry.payload.active else None
    return None


def depth_words(depth: int) -> str:
    """A note's depth as people read it: ``1 message``, ``4 messages``."""
    return "1 message" if depth == 1 else f"{depth} messages"


def note_text(note: Note) -> str:
    """What the model reads."""
    return f"[Note: {note.text}]"


def pin_note(messages: Sequence[Message], note: Note | None) -> list[Message]:
    """``messages`` (already alternating) with ``note`` placed as the module
    says; a note that is off (no text) places nothing."""
    out = list(messages)
    if note is None or not note.active or not out:
        return out
    item = TextContent(note_text(note))
    for index in range(min(len(out) - 1 - note.depth, len(out) - 1), -1, -1):
        if out[index].role == "user":
            out[index] = out[index].with_(content=out[index].content + (item,))
            return out
    if out[0].role == "user":
        out[0] = out[0].with_(content=(item,) + out[0].content)
    else:
        out.insert(0, Message(role="user", content=(item,)))
    return out
