"""Turning untrusted text into something safe to display.

Every string that came from a model, a tool, a user or a file passes through
:func:`clean` (terminal control sequences removed) and is displayed through
:class:`~textual.content.Content` objects built *without* markup parsing, so
``[bold]`` or ``[@click=app.quit]`` in a reply shows literally.
"""

from __future__ import annotations

from textual.content import Content

from core.sanitize import strip_control


def clean(text: str | None) -> str:
    """Text with terminal control sequences and control characters removed."""
    return strip_control(text or "")


def plain(text: str | None, style: str = "") -> Content:
    """Literal (never markup-parsed) content from untrusted text."""
    content = Content(clean(text))
    return content.stylize(style) if style and content else content


def one_line(text: str | None, limit: int = 200) -> str:
    """The first non-empty line of ``text``, cleaned and shortened to ``limit`` characters."""
    for line in clean(text).splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


def human_size(count: int) -> str:
    """``12 KB``-style size of a byte count."""
    size = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            if unit == "B":
                return f"{int(size)} B"
            return f"{size:.0f} {unit}" if size >= 10 else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} B"  # pragma: no cover


def human_count(count: int) -> str:
    """``1,234``-style integer."""
    return f"{count:,}"


def clip_lines(text: str, max_lines: int) -> tuple[str, int]:
    """The first ``max_lines`` lines of ``text`` and how many lines were left out."""
    lines = text.split("\n")
    if len(lines) <= max_lines:
        return text, 0
    return "\n".join(lines[:max_lines]), len(lines) - max_lines
