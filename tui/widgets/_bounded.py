"""How much of one message the chat view shows.

Wrapping and laying out text costs in proportion to its length, on the event
loop: a message of tens of megabytes (a pasted log, a tool's dump) froze the
app for half a minute when its session opened. The view shows a head of at
most :data:`SHOWN_CHARS` characters and a note of how much more there is; the
entry (the database, the context sent to the model, copy, edit and every
export) keeps the whole text.
"""

from __future__ import annotations

from core.sessions.content import TextContent
from core.sessions.messages import Message
from tui.widgets._text import human_size

SHOWN_CHARS = 100_000
"""Characters of one text block the view lays out: pages of text, far more than
a screen, and still quick to wrap and parse."""


def bounded(text: str, limit: int = SHOWN_CHARS) -> tuple[str, str | None]:
    """The head of ``text`` to show, ending at a line break when one is near
    the limit, and the note of what it leaves out (None when nothing)."""
    if len(text) <= limit:
        return text, None
    cut = text.rfind("\n", limit // 2, limit)
    head = text[: cut if cut > 0 else limit]
    return head, _note(_utf8_size(text) - _utf8_size(head))


def bounded_message(message: Message, limit: int = SHOWN_CHARS) -> tuple[Message, str | None]:
    """``message`` with each text block cut to its head, and the note of what
    was cut (the same message and None when nothing was)."""
    content = list(message.content)
    more = 0
    for i, block in enumerate(content):
        if isinstance(block, TextContent) and len(block.text) > limit:
            head, _ = bounded(block.text, limit)
            content[i] = TextContent(head)
            more += _utf8_size(block.text) - _utf8_size(head)
    if not more:
        return message, None
    return message.with_(content=tuple(content)), _note(more)


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _note(more: int) -> str:
    return f"… {human_size(more)} more, not shown: /export writes the whole message"
