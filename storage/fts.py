"""Full-text search helpers: what text an entry contributes, and how user
input becomes an FTS5 query that cannot be a syntax error."""

from __future__ import annotations

from core.sessions.entries import Entry
from core.sessions.messages import Message

SEARCHABLE_ROLES = ("user", "assistant", "tool_result")

# Snippets mark matches with these; remove them from indexed text so a marker
# in a snippet is always one SQLite put there.
HIGHLIGHT_START = "\x02"
HIGHLIGHT_END = "\x03"
_MARKERS = str.maketrans({HIGHLIGHT_START: " ", HIGHLIGHT_END: " "})
MIN_PREFIX = 2


def searchable_text(entry: Entry) -> str | None:
    """The text an entry is found by: user and assistant text, tool results."""
    message = entry.payload
    if not isinstance(message, Message) or message.role not in SEARCHABLE_ROLES:
        return None
    text = message.text
    return text.translate(_MARKERS) if text.strip() else None


def match_query(text: str) -> str | None:
    """An FTS5 query matching entries that hold every word of ``text``.

    Each whitespace-separated word becomes a quoted phrase (so operators,
    quotes and brackets are plain text); the last word also matches as a
    prefix, for search as you type, once it has :data:`MIN_PREFIX`
    characters (a one-letter prefix matches nearly every word, and merging
    all their lists is slow). ``None`` when there is nothing to search.
    """
    words = text.replace("\x00", " ").split()
    if not words:
        return None
    phrases = ['"' + word.replace('"', '""') + '"' for word in words]
    if len(words[-1]) >= MIN_PREFIX:
        phrases[-1] += "*"
    return " ".join(phrases)
