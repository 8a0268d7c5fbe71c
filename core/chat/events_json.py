"""The conversation's events as JSON objects, for ``tangents --json`` and any
script or editor that reads them (one object per event, ``type`` first).

Saved entries carry their ids, role, stop reason, usage and cost; a turn's
end carries how it stopped. Text is as the model sent it: the writer
(:func:`core.sanitize.json_for_terminal`) escapes what a terminal would obey.
"""

from __future__ import annotations

from typing import Any

from core.branching.comparison import timing
from core.chat.events import (
    AgentAsked,
    ColumnEvent,
    ColumnFinished,
    ColumnWaiting,
    CompactionEnded,
    CompactionStarted,
    EntriesSaved,
    Event,
    Notice,
    PositionMoved,
    Silence,
    ToolChanged,
    TurnEnded,
    Waiting,
    WindowLearned,
)
from core.providers.base import (
    Done,
    ErrorEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)
from core.sessions.entries import Entry
from core.sessions.messages import Usage


def event_json(event: Event) -> dict[str, Any] | None:
    """The object for ``event``; None for events with nothing to say (a
    thinking signature alone)."""
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text} if event.text else None
    if isinstance(event, ThinkingDelta):
        if not event.text and not event.redacted:
            return None
        return {"type": "thinking", "text": event.text, "redacted": event.redacted}
    if isinstance(event, ToolCallDelta):
        return {
            "type": "tool_call_delta",
            "index": event.index,
            "id": event.id,
            "name": event.name,
            "arguments": event.arguments,
        }
    if isinstance(event, UsageEvent):
        return {"type": "usage", **usage_json(event.usage)}
    if isinstance(event, Done):
        return {"type": "done", "stop_reason": event.stop_reason}
    if isinstance(event, ErrorEvent):
        return {"type": "error", "kind": event.error.kind, "message": event.error.message}
    if isinstance(event, Waiting):
        return {"type": "waiting", "seconds": event.seconds, "error": event.error.message}
    if isinstance(event, Silence):
        return {"type": "silence", "seconds": int(event.seconds), "started": event.started}
    if isinstance(event, Notice):
        return {"type": "notice", "text": event.text}
    if isinstance(event, CompactionStarted):
        return {"type": "compaction_started", "trigger": event.trigger}
    if isinstance(event, CompactionEnded):
        entry_id = event.entry.id if event.entry is not None else None
        return {"type": "compaction_ended", "trigger": event.trigger, "entry_id": entry_id}
    if isinstance(event, WindowLearned):
        return {
            "type": "window_learned",
            "model": event.model,
            "tokens": event.tokens,
            "source": event.source,
        }
    if isinstance(event, ToolChanged):
        return _tool_json(event)
    if isinstance(event, EntriesSaved):
        return {"type": "entries_saved", "entries": [entry_json(e) for e in event.entries]}
    if isinstance(event, PositionMoved):
        return {
            "type": "position_moved",
            "leaf_id": event.leaf_id,
            "left_branch": event.left_branch,
        }
    if isinstance(event, AgentAsked):
        return {"type": "agent", "agent": event.agent, "model": event.model}
    if isinstance(event, TurnEnded):
        result = event.result
        return {
            "type": "turn_ended",
            "agent": result.message.agent,
            "stop": result.stop,
            "tool_steps": result.steps,
            "entry_id": result.final.entry.id if result.final.entry is not None else None,
            "error": result.error.message if result.error is not None else None,
        }
    if isinstance(event, ColumnEvent | ColumnWaiting):
        inner = event_json(
            event.event if isinstance(event, ColumnEvent) else Waiting(event.seconds, event.error)
        )
        return None if inner is None else {**inner, "column": event.column, "model": event.model}
    if isinstance(event, ColumnFinished):
        return _column_json(event)
    raise TypeError(f"not a conversation event: {event!r}")


def usage_json(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cost": usage.cost,
        **({"estimated": True} if usage.estimated else {}),
    }


def entry_json(entry: Entry) -> dict[str, Any]:
    """An entry's identity and what a script needs to follow the turn; the
    whole payload is in the session (``tangents sessions export``)."""
    data: dict[str, Any] = {"id": entry.id, "parent_id": entry.parent_id, "kind": entry.type}
    message = entry.message
    if message is not None:
        data["role"] = message.role
        if message.role == "assistant":
            data["model"] = message.model
            data["agent"] = message.agent
            data["stop_reason"] = message.stop_reason
            data["text"] = message.text
            if message.usage is not None:
                data["usage"] = usage_json(message.usage)
    return data


def _tool_json(event: ToolChanged) -> dict[str, Any]:
    activity = event.activity
    data: dict[str, Any] = {
        "type": "tool",
        "id": activity.call.id,
        "name": activity.name,
        "state": activity.state,
        "arguments": activity.call.arguments,
    }
    if activity.state == "pending" and activity.preview is not None:
        data["awaiting_approval"] = True
    if activity.elapsed is not None:
        data["seconds"] = round(activity.elapsed, 3)
    if activity.result is not None:
        data["is_error"] = activity.result.is_error
        data["output"] = "".join(getattr(c, "text", "") for c in activity.result.content)
    return data


def _column_json(event: ColumnFinished) -> dict[str, Any]:
    """One model of a comparison is done: its reply (saved, also when stopped
    or failed), how it stopped and how long it took."""
    result = event.result
    reply, message = result.reply, result.message
    ttft, seconds = timing(message) if message is not None else (None, None)
    return {
        "type": "column_ended",
        "column": event.column,
        "model": result.model,
        "entry_id": reply.id if reply is not None else None,
        "stop_reason": message.stop_reason if message is not None else None,
        "error": result.error,
        "ttft": ttft,
        "seconds": seconds,
    }
