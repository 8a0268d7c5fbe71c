"""MPLP dialog export: the current branch as a document valid against the MPLP
dialog schema (``mplp-dialog.schema.json``, protocol 1.0.0).

MPLP messages are plain text with a role of ``user``, ``assistant``,
``system`` or ``agent``, so:

- user, assistant and system messages keep their role; an assistant's tool
  calls are written into its text as ``[tool call NAME ARGUMENTS]`` lines;
- a named agent's reply (an assistant message with an ``agent``) gets the
  ``agent`` role with ``[Name] `` before its text (MPLP 5.2), which
  :mod:`core.formats.mplp_import` reads back;
- tool results (produced by Tangents, not by the model or the user) and
  custom notes get the ``agent`` role;
- each message carries an ``event`` (``dialog.message``) whose ``data`` holds
  what plain text cannot: the Tangents entry id, model, stop reason, error,
  usage, tool calls, tool result ids and images;
- compactions, branch summaries, model changes and pinned notes are dialog
  ``events`` (``dialog.compacted``, ``dialog.branch.summarized``,
  ``dialog.model.changed``, ``dialog.note.pinned``),
  after ``dialog.started`` which records the session's id, title and cwd.

MPLP identifiers must be UUIDv4 strings; Tangents ids are UUIDv7, so each
MPLP id is derived from the Tangents id by hashing (stable across exports)
and the Tangents ids are kept in event data. ``dialog_id`` comes from the
session, ``thread_id`` from the session a fork was made from (a session
and its forks share one thread), ``context_id`` from the session's working
directory (sessions of one project share it). ``status`` is the session's.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

from core.sessions.content import (
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolResultContent,
)
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note
from core.sessions.messages import Message
from core.sessions.persistence import SessionInfo

PROTOCOL_VERSION = "1.0.0"
SCHEMA_VERSION = "1.0.0"
SOURCE = "tangents"
_ROLES = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool_result": "agent",
    "custom": "agent",
}


def mplp_id(kind: str, value: str) -> str:
    """A UUIDv4-shaped id derived from ``kind`` and a Tangents id."""
    digest = bytearray(hashlib.sha256(f"tangents:{kind}:{value}".encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40
    digest[8] = (digest[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(digest)))


def to_mplp_dialog(
    info: SessionInfo, path: Sequence[Entry], labels: dict[str, str] | None = None
) -> dict[str, Any]:
    labels = labels or {}
    messages: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = [
        _event(
            "dialog.started",
            mplp_id("session-start", info.id),
            info.created_at,
            {"session_id": info.id, "title": info.title, "cwd": info.cwd, "leaf_id": info.leaf_id},
        )
    ]
    for entry in path:
        payload = entry.payload
        if isinstance(payload, Message):
            messages.append(_message(entry, payload, labels.get(entry.id)))
        elif isinstance(payload, Compaction):
            data = {
                "entry_id": entry.id,
                "summary": payload.summary,
                "tokens_before": payload.tokens_before,
                "first_kept_id": payload.first_kept_id,
            }
            events.append(
                _event("dialog.compacted", mplp_id("entry", entry.id), entry.created_at, data)
            )
        elif isinstance(payload, BranchSummary):
            data = {"entry_id": entry.id, "summary": payload.summary, "from_id": payload.from_id}
            events.append(
                _event(
                    "dialog.branch.summarized", mplp_id("entry", entry.id), entry.created_at, data
                )
            )
        elif isinstance(payload, ModelChange):
            data = {"entry_id": entry.id, "model": payload.model, "thinking": payload.thinking}
            events.append(
                _event("dialog.model.changed", mplp_id("entry", entry.id), entry.created_at, data)
            )
        elif isinstance(payload, Note):
            data = {"entry_id": entry.id, **payload.to_dict()}
            events.append(
                _event("dialog.note.pinned", mplp_id("entry", entry.id), entry.created_at, data)
            )
    tags = ["tangents", f"tangents-session:{info.id}"]
    meta = {
        "protocol_version": PROTOCOL_VERSION,
        "schema_version": SCHEMA_VERSION,
        "created_at": info.created_at,
        "created_by": SOURCE,
        "updated_at": info.updated_at,
        "tags": tags,
    }
    dialog: dict[str, Any] = {
        "meta": meta,
        "dialog_id": mplp_id("session", info.id),
        "context_id": mplp_id("context", info.cwd or info.id),
        "thread_id": mplp_id("thread", info.parent_session_id or info.id),
        "status": info.status,
        "messages": messages,
        "started_at": info.created_at,
        "events": events,
    }
    if info.status in ("completed", "cancelled"):
        dialog["ended_at"] = info.updated_at
    return dialog


def agent_of(message: Message) -> str | None:
    """The named agent that wrote an assistant message (its payload's
    ``agent``), if any."""
    agent = message.to_dict().get("agent") if message.role == "assistant" else None
    return agent if isinstance(agent, str) and agent.strip() else None


def _event(kind: str, event_id: str, timestamp: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "event_id": event_id,
        "event_type": kind,
        "source": SOURCE,
        "timestamp": timestamp,
        "data": {k: v for k, v in data.items() if v is not None},
    }


def _message(entry: Entry, message: Message, label: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {"entry_id": entry.id, "role": message.role}
    for key in ("model", "provider", "stop_reason", "error", "custom_type"):
        value = getattr(message, key)
        if value is not None:
            data[key] = value
    if label:
        data["label"] = label
    agent = agent_of(message)
    if agent is not None:
        data["agent"] = agent
    if message.usage is not None:
        data["usage"] = message.usage.to_dict()
    if message.tool_calls:
        data["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments, "raw_arguments": c.raw_arguments}
            for c in message.tool_calls
        ]
    if message.tool_results:
        data["tool_results"] = [
            {"tool_call_id": r.tool_call_id, "is_error": r.is_error} for r in message.tool_results
        ]
    if message.thinking:
        data["thinking"] = ["[redacted]" if t.redacted else t.text for t in message.thinking]
    if message.images:
        data["images"] = [
            {"media_type": i.media_type, "sha256": i.sha256, "width": i.width, "height": i.height}
            for i in message.images
        ]
    event = _event("dialog.message", mplp_id("entry", entry.id), entry.created_at, data)
    return {
        "role": "agent" if agent is not None else _ROLES[message.role],
        "content": f"[{agent}] {_text(message)}" if agent is not None else _text(message),
        "timestamp": entry.created_at,
        "event": event,
    }


def _text(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image: {block.describe()}]")
        elif isinstance(block, FileContent):
            parts.append(f"[file: {block.describe()}]")
        elif isinstance(block, ThinkingContent):
            continue
        elif isinstance(block, ToolResultContent):
            body = "\n".join(
                c.text if isinstance(c, TextContent) else f"[image: {c.describe()}]"
                for c in block.content
            )
            parts.append(("[tool error] " if block.is_error else "") + body)
        else:  # a tool call
            parts.append(
                f"[tool call {block.name} {block.raw_arguments or json.dumps(block.arguments)}]"
            )
    return "\n\n".join(p for p in parts if p)
