"""What the copy keys put on the clipboard: a message's text, or its last code block."""

from __future__ import annotations

import re

from core.sessions.entries import BranchSummary, Compaction, Entry

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.MULTILINE | re.DOTALL)


def message_text(entry: Entry) -> str:
    """The text of a message (its Markdown source for a reply) or of a summary."""
    payload = entry.payload
    if isinstance(payload, (Compaction, BranchSummary)):
        return payload.summary
    message = entry.message
    return message.text if message is not None else ""


def last_code_block(text: str) -> str | None:
    """The content of the last fenced code block (``` or ~~~) in Markdown ``text``, if any."""
    blocks = _FENCE.findall(text)
    return blocks[-1][1].rstrip("\n") if blocks else None
