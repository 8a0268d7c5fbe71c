"""Markdown export: the current branch, readable.

Headings per message (with the model and, when the turn did not finish, the
stop reason: aborted, interrupted, error), thinking in a collapsed
``<details>``, tool calls and results in fences longer than any backtick run
they contain, compactions and branch summaries as their own sections.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.entries import BranchSummary, Compaction, Entry, ModelChange
from core.messages import Message
from core.store import SessionInfo


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in ``text``."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _message_markdown(message: Message) -> list[str]:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent):
            body = "[redacted thinking]" if block.redacted else block.text
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
    return parts


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
            heading = _HEADINGS[payload.role]
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
            lines.append(payload.summary + "\n")
        elif isinstance(payload, BranchSummary):
            lines.append("## Branch summary\n")
            lines.append(payload.summary + "\n")
        elif isinstance(payload, ModelChange):
            lines.append(f"*Model: {payload.model}, thinking: {payload.thinking}*\n")
    return "\n".join(lines).rstrip() + "\n"
