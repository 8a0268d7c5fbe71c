"""Comparing session trees across formats, where ids change on import."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from core.content import ImageContent, ThinkingContent, ToolCallContent, ToolResultContent
from core.entries import BranchSummary, Compaction, Entry, ModelChange


def describe(entry: Entry) -> tuple[Any, ...]:
    """What an entry says, without ids."""
    payload = entry.payload
    if isinstance(payload, Compaction):
        return ("compaction", payload.summary, payload.tokens_before)
    if isinstance(payload, BranchSummary):
        return ("branch_summary", payload.summary)
    if isinstance(payload, ModelChange):
        return ("model_change", payload.model, payload.thinking)
    blocks = []
    for block in payload.content:
        if isinstance(block, ThinkingContent):
            blocks.append(("thinking", block.text, block.signature))
        elif isinstance(block, ToolCallContent):
            blocks.append(
                ("tool_call", block.id, block.name, json.dumps(block.arguments, sort_keys=True))
            )
        elif isinstance(block, ToolResultContent):
            blocks.append(("tool_result", block.tool_call_id, block.text, block.is_error))
        elif isinstance(block, ImageContent):
            blocks.append(("image", block.sha256))
        else:
            blocks.append(("text", block.text))
    return ("message", payload.role, tuple(blocks))


def shape(entries: Sequence[Entry]) -> tuple[Any, ...]:
    """The tree as nested (entry, children) tuples, children in a fixed order."""
    children: dict[str | None, list[Entry]] = {}
    for entry in entries:
        children.setdefault(entry.parent_id, []).append(entry)

    def node(entry: Entry) -> tuple[Any, ...]:
        return (describe(entry), tuple(sorted(node(c) for c in children.get(entry.id, []))))

    return tuple(sorted(node(root) for root in children.get(None, [])))


def path_to(entries: Sequence[Entry], leaf_id: str | None) -> list[Entry]:
    by_id = {e.id: e for e in entries}
    path = []
    node = by_id.get(leaf_id) if leaf_id else None
    while node is not None:
        path.append(node)
        node = by_id.get(node.parent_id) if node.parent_id else None
    return path[::-1]
