"""Comparing session trees across formats, where ids change on import."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from core.sessions.content import ImageContent, ThinkingContent, ToolCallContent, ToolResultContent
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange


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


def shape(entries: Sequence[Entry]) -> tuple[str, ...]:
    """The tree as a digest per root of (entry, children's digests in a fixed
    order), built bottom-up without recursion: real sessions are thousands deep."""
    children: dict[str | None, list[Entry]] = {}
    for entry in entries:
        children.setdefault(entry.parent_id, []).append(entry)
    done: dict[str, tuple[Any, ...]] = {}
    stack = [(root, False) for root in children.get(None, [])]
    while stack:
        entry, expanded = stack.pop()
        kids = children.get(entry.id, [])
        if expanded:
            below = sorted(done.pop(k.id) for k in kids)
            done[entry.id] = hashlib.sha256(repr((describe(entry), below)).encode()).hexdigest()
        else:
            stack.append((entry, True))
            stack.extend((kid, False) for kid in kids)
    return tuple(sorted(done[root.id] for root in children.get(None, [])))


def path_to(entries: Sequence[Entry], leaf_id: str | None) -> list[Entry]:
    by_id = {e.id: e for e in entries}
    path = []
    node = by_id.get(leaf_id) if leaf_id else None
    while node is not None:
        path.append(node)
        node = by_id.get(node.parent_id) if node.parent_id else None
    return path[::-1]


def same_entries(original: Sequence[Entry], imported: Sequence[Entry]) -> list[str]:
    """Where ``imported`` (a copy with fresh ids) differs from ``original``:
    entries are paired by creation time and content, then compared whole
    (payload, time, parent, the entries a summary or compaction names)."""
    key = {(e.created_at, repr(describe(e))): e for e in original}
    pairs = [(e, key.get((e.created_at, repr(describe(e))))) for e in imported]
    old = {new.id: match.id for new, match in pairs if match is not None}
    problems = [f"no original for {describe(new)}" for new, match in pairs if match is None]
    if len(old) != len(original):
        problems.append(f"{len(original)} entries, {len(old)} came back")
    for new, match in pairs:
        if match is None:
            continue
        parent = old.get(new.parent_id) if new.parent_id else None
        # A compaction keeps entries of its own branch only (Tangents never
        # names another; the strategy may): one that does keeps nothing.
        branch = {e.id: e.id for e in path_to(original, match.id)}
        ours = _named(match.payload, {e.id: e.id for e in original}, branch)
        theirs = _named(new.payload, old, old)
        if isinstance(ours, Compaction) and isinstance(theirs, Compaction):
            theirs = replace(theirs, first_kept_id=theirs.first_kept_id and ours.first_kept_id)
        if (parent, new.type, theirs) != (match.parent_id, match.type, ours):
            problems.append(f"{match.to_dict()} came back as {new.to_dict()}")
    return problems


def _named(payload: Any, ids: dict[str, str], branch: dict[str, str]) -> Any:
    """``payload`` with the entries it names translated by ``ids`` (``branch``
    for a compaction's kept entry), None for one that is not there."""
    if isinstance(payload, Compaction) and payload.first_kept_id:
        return replace(payload, first_kept_id=branch.get(payload.first_kept_id))
    if isinstance(payload, BranchSummary) and payload.from_id:
        return replace(payload, from_id=ids.get(payload.from_id))
    return payload
