"""Export of a whole session tree as a pi coding-agent session file (version 3).

One JSON object a line: the ``session`` header, then every entry of the
tree with its Tangents id as ``id`` and its parent as ``parentId``, parents
before children. pi takes the last entry of a file as the current position,
so the file ends on the current branch: at each fork the branch that leads to
the leaf is written last, and the file closes with the label entries and a
``session_info`` entry (the title) chained below the leaf (without either, a
``custom`` entry of ``customType: "tangents-position"``), as pi appends them
(when the leaf has children of its own, these closing entries are what make
it the position again).

Entries map to pi's own:

- messages: ``user`` (text, images as base64), ``assistant`` (text, thinking
  with its ``thinkingSignature``, ``toolCall``; ``provider``/``model`` split
  from ``provider/model``; ``usage`` with costs; ``stopReason``;
  ``errorMessage``), ``toolResult`` (``toolCallId``, ``toolName`` found from
  its call, text and images, ``isError``). Fields a pi import kept in
  ``meta["pi"]`` are written back. Beside the message, a ``tangents`` field
  (which pi ignores) carries what pi's fields lose, so a Tangents import
  gives back the very message (see :func:`_tangents_fields`).
- ``compaction`` (``summary``, ``firstKeptEntryId``, ``tokensBefore``,
  ``details``), ``branch_summary`` (``fromId``, ``"root"`` for none),
  ``model_change`` (``provider``/``modelId``, plus ``thinkingLevel``, which
  pi ignores and a Tangents import reads back) followed by the
  ``thinking_level_change`` pi reads (marked ``partOf`` the model change, so
  a Tangents import makes one entry of the two).
- Messages pi has no place for (system prompts, notes shown but never sent,
  a block pi's role does not allow, such as an attached audio file or PDF)
  become ``custom`` entries of ``customType: "tangents"`` that carry the
  Tangents message and the bytes of its images and files: pi keeps them
  out of the model's context and a Tangents import restores them.

Images whose bytes are not in the database become a text note.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from core.formats.pi import (
    PI_VERSION,
    TANGENTS_CUSTOM_TYPE,
    TANGENTS_FIELDS,
    TANGENTS_NOTE_TYPE,
    TANGENTS_POSITION_TYPE,
)
from core.sanitize import json_for_terminal
from core.sessions.content import (
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note
from core.sessions.messages import Message, Usage
from core.sessions.persistence import Blob, SessionInfo

STOP_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_use": "toolUse",
    "error": "error",
    "aborted": "aborted",
    "interrupted": "error",
}


def to_pi_jsonl(
    info: SessionInfo,
    entries: Sequence[Entry],
    labels: Mapping[str, str],
    blobs: Mapping[str, Blob],
) -> str:
    """The session as the text of a pi session file (one JSON object a line)."""
    # JSON escapes keep C1, bidi controls and lone surrogates exact and off the terminal.
    return "".join(
        json_for_terminal(line, indent=None) + "\n" for line in _lines(info, entries, labels, blobs)
    )


def _lines(
    info: SessionInfo,
    entries: Sequence[Entry],
    labels: Mapping[str, str],
    blobs: Mapping[str, Blob],
) -> Iterable[dict[str, Any]]:
    header: dict[str, Any] = {
        "type": "session",
        "version": PI_VERSION,
        "id": info.id,
        "timestamp": info.created_at,
        "cwd": info.cwd or "",
    }
    yield header
    tool_names = {
        block.id: block.name
        for entry in entries
        if entry.message is not None
        for block in entry.message.content
        if isinstance(block, ToolCallContent)
    }
    ids = {entry.id for entry in entries}
    ordered = _leaf_last(entries, info.leaf_id)
    below: dict[str, str] = {}  # a model change's id -> its thinking_level_change's
    for entry in ordered:
        line = {
            "type": "",
            "id": entry.id,
            "parentId": below.get(entry.parent_id, entry.parent_id) if entry.parent_id else None,
            "timestamp": entry.created_at,
        }
        line.update(_entry_fields(entry, tool_names, blobs, ids))
        yield line
        if isinstance(entry.payload, ModelChange):
            # pi reads the thinking level from its own entry; a Tangents import
            # takes it from the model_change and skips this one (``partOf``).
            below[entry.id] = f"{entry.id}-thinking"
            yield {
                "type": "thinking_level_change",
                "id": below[entry.id],
                "parentId": entry.id,
                "timestamp": entry.created_at,
                "thinkingLevel": entry.payload.thinking,
                "partOf": entry.id,
            }
    # Labels and the title hang below the leaf, so the leaf is the file's position.
    parent = info.leaf_id if info.leaf_id in ids else None
    parent = below.get(parent, parent) if parent else None
    closing = parent
    last = max((e.created_at for e in entries), default=info.updated_at)
    placed = ((target, label) for target, label in labels.items() if target in ids)
    for number, (target, label) in enumerate(placed, 1):
        label_id = f"{info.id}-label-{number}"
        yield {
            "type": "label",
            "id": label_id,
            "parentId": parent,
            "timestamp": last,
            "targetId": target,
            "label": label,
        }
        parent = label_id
    if info.title:
        yield {
            "type": "session_info",
            "id": f"{info.id}-info",
            "parentId": parent,
            "timestamp": info.updated_at,
            "name": info.title,
        }
    elif parent == closing and ordered and ordered[-1].id != info.leaf_id and info.leaf_id in ids:
        # Nothing else to close the file with: an entry pi and Tangents both ignore.
        yield {
            "type": "custom",
            "id": f"{info.id}-position",
            "parentId": info.leaf_id,
            "timestamp": last,
            "customType": TANGENTS_POSITION_TYPE,
        }


def _leaf_last(entries: Sequence[Entry], leaf_id: str | None) -> list[Entry]:
    """Parent-first order (depth first, in creation order) in which, at every
    fork, the child leading to ``leaf_id`` comes last."""
    by_id = {e.id: e for e in entries}
    on_path: set[str] = set()
    node = by_id.get(leaf_id) if leaf_id else None
    while node is not None:
        on_path.add(node.id)
        node = by_id.get(node.parent_id) if node.parent_id else None
    children: dict[str | None, list[Entry]] = {}
    for entry in entries:
        parent = entry.parent_id if entry.parent_id in by_id else None
        children.setdefault(parent, []).append(entry)

    def order(siblings: list[Entry]) -> list[Entry]:
        return sorted(siblings, key=lambda e: e.id in on_path)

    out: list[Entry] = []
    stack = list(reversed(order(children.get(None, []))))
    while stack:
        entry = stack.pop()
        out.append(entry)
        stack.extend(reversed(order(children.get(entry.id, []))))
    return out


def _entry_fields(
    entry: Entry, tool_names: Mapping[str, str], blobs: Mapping[str, Blob], ids: set[str]
) -> dict[str, Any]:
    payload = entry.payload
    if isinstance(payload, Compaction):
        fields: dict[str, Any] = {
            "type": "compaction",
            "summary": payload.summary,
            "firstKeptEntryId": payload.first_kept_id if payload.first_kept_id in ids else None,
            "tokensBefore": payload.tokens_before,
        }
        if payload.details:
            fields["details"] = payload.details
        return fields
    if isinstance(payload, BranchSummary):
        return {
            "type": "branch_summary",
            "fromId": payload.from_id if payload.from_id in ids else "root",
            "summary": payload.summary,
        }
    if isinstance(payload, ModelChange):
        provider, model = _split_model(payload.model)
        return {
            "type": "model_change",
            "provider": provider,
            "modelId": model,
            "thinkingLevel": payload.thinking,
        }
    if isinstance(payload, Note):
        # pi has no pinned note: a custom entry (extension state to pi) carries it.
        return {"type": "custom", "customType": TANGENTS_NOTE_TYPE, "data": payload.to_dict()}
    message = _message(payload, entry, tool_names, blobs)
    if message is None:
        images = {
            image.sha256: base64.b64encode(blobs[image.sha256].data).decode("ascii")
            for image in payload.images
            if image.sha256 in blobs
        }
        files = {
            block.sha256: base64.b64encode(blobs[block.sha256].data).decode("ascii")
            for block in payload.content
            if isinstance(block, FileContent) and block.sha256 in blobs
        }
        data: dict[str, Any] = {"message": payload.to_dict()}
        if images:
            data["images"] = images
        if files:
            data["files"] = files
        return {"type": "custom", "customType": TANGENTS_CUSTOM_TYPE, "data": data}
    return {"type": "message", "message": message, TANGENTS_FIELDS: _tangents_fields(payload)}


def _tangents_fields(message: Message) -> dict[str, Any]:
    """Every field of the Tangents message but its role and content (pi's
    form loses some: the client that answered, no usage, an ``interrupted``
    stop, meta, a tool call's arguments as the model wrote them), so a
    Tangents import gives back the very message. pi's own fields a pi import
    kept in ``meta["pi"]`` are written into pi's message instead; ``"pi":
    true`` says they were there."""
    fields = message.to_dict()
    del fields["role"], fields["content"]
    meta = fields.pop("meta", {})
    if "pi" in meta:
        fields["pi"] = True
        meta = {k: v for k, v in meta.items() if k != "pi"}
    if meta:
        fields["meta"] = meta
    raw = [block.raw_arguments for block in message.content if isinstance(block, ToolCallContent)]
    if raw:  # the calls' JSON as the model sent it (pi keeps it parsed only)
        fields["rawArguments"] = raw
    return fields


def _message(
    message: Message, entry: Entry, tool_names: Mapping[str, str], blobs: Mapping[str, Blob]
) -> dict[str, Any] | None:
    """pi's form of the message; None when pi has no place for it."""
    kept = dict(message.meta.get("pi", {})) if isinstance(message.meta.get("pi"), dict) else {}
    kept.pop("id", None)
    extras = kept.pop("blocks", None)
    kept.pop("role", None)
    kept.pop("type", None)
    timestamp = _millis(entry.created_at)
    if message.role == "user" and _only(message.content, TextContent, ImageContent):
        return {
            **kept,
            "role": "user",
            "content": _blocks(message.content, blobs, extras),
            "timestamp": timestamp,
        }
    if message.role == "assistant" and _only(
        message.content, TextContent, ThinkingContent, ToolCallContent
    ):
        provider, model = _split_model(message.model)
        out: dict[str, Any] = {
            **kept,
            "role": "assistant",
            "content": _blocks(message.content, blobs, extras),
            "provider": provider,
            "model": model,
            "usage": _usage(message.usage or Usage()),
            "stopReason": STOP_REASONS[message.stop_reason or "stop"],
            "timestamp": timestamp,
        }
        if message.error is not None:
            out["errorMessage"] = message.error
        return out
    if (
        message.role == "tool_result"
        and len(message.content) == 1
        and isinstance(message.content[0], ToolResultContent)
    ):
        result = message.content[0]
        return {
            **kept,
            "role": "toolResult",
            "toolCallId": result.tool_call_id,
            "toolName": tool_names.get(result.tool_call_id, kept.get("toolName", "")),
            "content": _blocks(result.content, blobs, extras),
            "isError": result.is_error,
            "timestamp": timestamp,
        }
    return None


def _only(blocks: Sequence[object], *kinds: type) -> bool:
    return all(isinstance(block, kinds) for block in blocks)


def _blocks(blocks: Sequence[object], blobs: Mapping[str, Blob], extras: Any) -> list[dict]:
    """pi's blocks, with the fields a pi import kept per block (``partialJson``,
    a provider's own signature...) put back."""
    out = [_block(block, blobs) for block in blocks]
    if isinstance(extras, dict):
        for index, extra in extras.items():
            if str(index).isdigit() and int(index) < len(out) and isinstance(extra, dict):
                out[int(index)] = {**extra, **out[int(index)]}
    return out


def _block(block: object, blobs: Mapping[str, Blob]) -> dict[str, Any]:
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingContent):
        out: dict[str, Any] = {"type": "thinking", "thinking": block.text}
        if block.signature is not None:
            out["thinkingSignature"] = block.signature
        if block.redacted:
            out["redacted"] = True
        return out
    if isinstance(block, ToolCallContent):
        return {
            "type": "toolCall",
            "id": block.id,
            "name": block.name,
            "arguments": block.arguments,
        }
    assert isinstance(block, ImageContent)
    blob = blobs.get(block.sha256)
    if blob is None:
        return {"type": "text", "text": f"[{block.describe()}: its bytes were not in the database]"}
    return {
        "type": "image",
        "data": base64.b64encode(blob.data).decode("ascii"),
        "mimeType": blob.media_type,
    }


def _split_model(model: str | None) -> tuple[str, str]:
    """pi's ``provider`` and ``modelId`` for a Tangents model name
    (``anthropic/claude-x``: the prefix names the provider)."""
    head, slash, tail = (model or "").partition("/")
    return (head, tail) if slash else ("", head)


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cacheRead": usage.cache_read_tokens,
        "cacheWrite": usage.cache_write_tokens,
        "totalTokens": usage.total_tokens,
        "reasoning": usage.reasoning_tokens,
        "cost": {
            "input": usage.input_cost,
            "output": usage.output_cost,
            "cacheRead": usage.cache_read_cost,
            "cacheWrite": usage.cache_write_cost,
            "total": usage.cost,
        },
    }


def _moment(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _millis(value: str) -> int | None:
    try:
        return int(_moment(value).timestamp() * 1000)
    except ValueError:
        return None
