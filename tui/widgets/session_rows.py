"""How a session looks in the picker: two lines of ``Text`` built from plain
strings (never markup), search matches styled, control characters stripped."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.style import Style
from rich.text import Text

from core.sanitize import strip_control
from core.sessions.ids import short_id
from core.sessions.persistence import SessionMatch
from storage.fts import HIGHLIGHT_END, HIGHLIGHT_START

_UNITS = (
    (365 * 86_400, "year"),
    (30 * 86_400, "month"),
    (86_400, "day"),
    (3_600, "hour"),
    (60, "min"),
)


def age(timestamp: str, now: datetime) -> str:
    """``"3 min ago"``, ``"2 days ago"``; ``"just now"`` under a minute."""
    try:
        then = datetime.fromisoformat(timestamp)
    except ValueError:
        return ""
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = (now - then).total_seconds()
    for size, unit in _UNITS:
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count > 1 and unit != 'min' else ''} ago"
    return "just now"


def one_line(text: str) -> str:
    """Safe to show on one row: no control characters, whitespace collapsed."""
    return " ".join(strip_control(text).split())


def marked(text: str, style: Style | str, highlight: Style | str) -> Text:
    """Text whose ``\\x02``...``\\x03`` marked parts (from the search) get ``highlight``."""
    result = Text(no_wrap=True, end="")
    for index, part in enumerate(text.split(HIGHLIGHT_START)):
        inside, found, after = part.partition(HIGHLIGHT_END)
        if index and found:
            result.append(_flat(inside), highlight)
            part = after
        result.append(_flat(part.replace(HIGHLIGHT_END, "")), style)
    return result


def _flat(text: str) -> str:
    return strip_control(text).replace("\n", " ").replace("\t", " ")


def title_line(match: SessionMatch, highlight: Style | str) -> Text:
    """The title (or, untitled, the first message), matches highlighted."""
    info = match.summary.info
    if match.title is not None:
        return marked(match.title, "bold", highlight)
    return Text(
        one_line(info.title or match.summary.first_message or "(empty session)"),
        "bold",
        no_wrap=True,
        end="",
    )


def detail_line(match: SessionMatch, highlight: Style | str) -> Text:
    """The short id to type, then the matching message's snippet when a message
    matched, else the first message unless the title line shows it already."""
    summary = match.summary
    line = Text(short_id(summary.info.id), no_wrap=True, end="")
    if match.snippet:
        line.append(" · ")
        line.append_text(marked(match.snippet, "", highlight))
    elif summary.info.title and summary.first_message:
        line.append(f" · {one_line(summary.first_message)}")
    return line


def counts(match: SessionMatch, now: datetime) -> str:
    summary = match.summary
    messages = f"{summary.message_count} msg{'s' if summary.message_count != 1 else ''}"
    branches = f"{summary.branch_count} branch{'es' if summary.branch_count != 1 else ''}"
    if summary.alternatives:
        branches += f" ({summary.alternatives} alt)"
    text = f"{messages} · {branches} · {age(summary.info.updated_at, now)}"
    if summary.synced_from:
        came = age(summary.synced_at or "", now)
        text += f" · from {one_line(summary.synced_from)}{' ' + came if came else ''}"
    return text
