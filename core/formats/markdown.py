"""Markdown export: the current branch, readable.

Headings per message (with the model and, when the turn did not finish, the
stop reason: aborted, interrupted, error), thinking in a collapsed
``<details>``, tool calls and results in fences longer than any backtick run
they contain, compactions and branch summaries as their own sections with the
summary quoted. The messages' own headings are nested under the message's
(``# Title`` in a reply becomes ``### Title``), so they never stand level with
``## User``; code blocks are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import quote

from core.sessions.content import (
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note
from core.sessions.messages import Message
from core.sessions.note import depth_words
from core.sessions.persistence import SessionInfo


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


HEADING_SHIFT = 2
"""A message's own ``#`` is written as ``###``: under its ``## User`` / ``## Assistant``."""
_ATX = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NOT_A_PARAGRAPH = re.compile(r"^\s*(?:[-*+>|]|\d+[.)])(?:\s|$)")


def nest_headings(text: str) -> str:
    """``text`` with its Markdown headings (ATX and setext) moved
    :data:`HEADING_SHIFT` levels down (at most level 6), outside code fences."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if opening:
            fence = opening.group(1)
            out.append(line)
            continue
        underline = _SETEXT.match(line)
        previous = out[-1] if out else ""
        if (
            underline
            and previous.strip()
            and not _ATX.match(previous)
            and not (_NOT_A_PARAGRAPH.match(previous))
        ):
            level = 1 if underline.group(1)[0] == "=" else 2
            out[-1] = "#" * min(6, level + HEADING_SHIFT) + " " + previous.strip()
            continue
        atx = _ATX.match(line)
        if atx:
            level = min(6, len(atx.group(2)) + HEADING_SHIFT)
            line = atx.group(1) + "#" * level + line[atx.end() :]
        out.append(line)
    return "\n".join(out)


def quoted(text: str) -> str:
    """``text`` as a Markdown block quote."""
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _message_markdown(message: Message) -> list[str]:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(nest_headings(block.text))
        elif isinstance(block, ThinkingContent):
            body = "[redacted thinking]" if block.redacted else nest_headings(block.text)
            parts.append("<details><summary>Thinking</summary>\n\n" + body + "\n\n</details>")
        elif isinstance(block, ToolCallContent):
            args = block.raw_arguments or "{}"
            fence = _fence(args)
            parts.append(
                f"**Tool call** `{block.name}` (`{block.id}`)\n\n{fence}json\n{args}\n{fence}"
            )
        elif isinstance(block, ToolResultContent):
            label = "Tool error" if block.is_error else "Tool result"
            text = block.text
            fence = _fence(text)
            images = "".join(
                f"\n\n[image: {c.describe()}]" for c in block.content if isinstance(c, ImageContent)
            )
            parts.append(
                f"**{label}** (`{block.tool_call_id}`)\n\n{fence}\n{text}\n{fence}{images}"
            )
        elif isinstance(block, ImageContent):
            parts.append(f"[image: {block.describe()}, sha256 {block.sha256[:12]}]")
        elif isinstance(block, FileContent):
            parts.append(_file_link(block))
    return parts


_LINK_TEXT_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def _file_link(block: FileContent) -> str:
    """An attached file as a link to its name beside the export, with its
    type, size and hash (the bytes are in the JSON and HTML exports)."""
    text = _LINK_TEXT_SPECIAL.sub(r"\\\1", " ".join(block.name.split()))
    return (
        f"📎 [{text}](<{quote(block.name, safe='')}>) "
        f"({block.media_type}, {block.size:,} bytes, sha256 {block.sha256[:12]})"
    )


_HEADINGS = {
    "system": "System",
    "user": "User",
    "assistant": "Assistant",
    "tool_result": "Tool",
    "custom": "Note",
}


def to_markdown(info: SessionInfo, path: Sequence[Entry]) -> str:
    """The current branch, readable."""
    lines = [f"# {info.title or 'Untitled session'}", ""]
    lines.append(f"Session `{info.id}` · created {info.created_at} · updated {info.updated_at}")
    lines.append("")
    for entry in path:
        payload = entry.payload
        if isinstance(payload, Message):
            heading = payload.agent or _HEADINGS[payload.role]
            extra = []
            if payload.model:
                extra.append(payload.model)
            if payload.stop_reason in ("aborted", "interrupted", "error"):
                extra.append(f"**{payload.stop_reason}**")
            if payload.error:
                extra.append(f"error: {payload.error}")
            lines.append(f"## {heading}" + (f" ({', '.join(extra)})" if extra else ""))
            lines.append("")
            lines.extend(part + "\n" for part in _message_markdown(payload))
        elif isinstance(payload, Compaction):
            lines.append(f"## Compaction ({payload.tokens_before} tokens summarized)\n")
            lines.append(quoted(payload.summary) + "\n")
        elif isinstance(payload, BranchSummary):
            lines.append("## Branch summary\n")
            lines.append(quoted(payload.summary) + "\n")
        elif isinstance(payload, ModelChange):
            lines.append(f"*Model: {payload.model}, thinking: {payload.thinking}*\n")
        elif isinstance(payload, Note):
            if payload.active:
                lines.append(f"## Note (pinned {depth_words(payload.depth)} from the end)\n")
                lines.append(quoted(payload.text) + "\n")
            else:
                lines.append("*Note removed*\n")
    return "\n".join(lines).rstrip() + "\n"
