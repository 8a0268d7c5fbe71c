"""Entries: the write-once rows of a session tree.

An entry's payload is one of :class:`Message`, :class:`Compaction`,
:class:`BranchSummary`, :class:`ModelChange` or :class:`Note`. Mutable state (the leaf, the
title, labels) lives on the session, never in entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Union

from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import Message, fast_construct

EntryType = Literal["message", "compaction", "branch_summary", "model_change", "note"]
ENTRY_TYPES: tuple[str, ...] = ("message", "compaction", "branch_summary", "model_change", "note")
THINKING_LEVELS: tuple[str, ...] = ("off", "low", "medium", "high")
DEFAULT_NOTE_DEPTH = 4
MAX_NOTE_DEPTH = 1_000


@dataclass(frozen=True)
class Compaction:
    """Everything before ``first_kept_id`` on the path is replaced by ``summary``."""

    summary: str
    first_kept_id: str | None
    tokens_before: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "first_kept_id": self.first_kept_id,
            "tokens_before": self.tokens_before,
            "details": self.details,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Compaction:
        return cls(
            summary=data["summary"],
            first_kept_id=data.get("first_kept_id"),
            tokens_before=int(data.get("tokens_before", 0)),
            details=dict(data.get("details") or {}),
        )


@dataclass(frozen=True)
class BranchSummary:
    """A summary of a branch the user left, starting at ``from_id``."""

    from_id: str | None
    summary: str

    def to_dict(self) -> dict[str, Any]:
        return {"from_id": self.from_id, "summary": self.summary}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BranchSummary:
        return cls(from_id=data.get("from_id"), summary=data["summary"])


@dataclass(frozen=True)
class ModelChange:
    model: str
    thinking: str = "off"
    api_base: str | None = None
    """The endpoint the model was used at (``--api-base``; a base URL, never a
    key), so a continued session goes back to it."""

    def __post_init__(self) -> None:
        if self.thinking not in THINKING_LEVELS:
            raise ValueError(f"unknown thinking level: {self.thinking!r}")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"model": self.model, "thinking": self.thinking}
        if self.api_base:
            data["api_base"] = self.api_base
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelChange:
        api_base = data.get("api_base")
        return cls(
            model=data["model"],
            thinking=data.get("thinking", "off"),
            api_base=api_base if isinstance(api_base, str) and api_base else None,
        )


@dataclass(frozen=True)
class Note:
    """A note pinned at a depth: every later request of the branch carries the
    newest note as a ``[Note: TEXT]`` user-role item ``depth`` messages from the
    end (core/sessions/note.py). An empty ``text`` turns the note off."""

    text: str
    depth: int = DEFAULT_NOTE_DEPTH

    def __post_init__(self) -> None:
        if not 0 <= self.depth <= MAX_NOTE_DEPTH:
            raise ValueError(f"a note's depth must be between 0 and {MAX_NOTE_DEPTH}")

    @property
    def active(self) -> bool:
        return bool(self.text.strip())

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "depth": self.depth}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Note:
        text, depth = data["text"], data.get("depth", DEFAULT_NOTE_DEPTH)
        if not isinstance(text, str) or isinstance(depth, bool) or not isinstance(depth, int):
            raise ValueError("a note needs a text and a whole-number depth")
        return cls(text=text, depth=depth)


Payload = Union[Message, Compaction, BranchSummary, ModelChange, Note]

_PAYLOAD_TYPES: dict[EntryType, Any] = {
    "message": Message,
    "compaction": Compaction,
    "branch_summary": BranchSummary,
    "model_change": ModelChange,
    "note": Note,
}


def entry_type_of(payload: Payload) -> EntryType:
    for name, cls in _PAYLOAD_TYPES.items():
        if isinstance(payload, cls):
            return name
    raise TypeError(f"not an entry payload: {type(payload).__name__}")


@dataclass(frozen=True)
class Entry:
    id: str
    parent_id: str | None
    session_id: str
    type: EntryType
    created_at: str
    payload: Payload

    @classmethod
    def new(cls, session_id: str, parent_id: str | None, payload: Payload) -> Entry:
        return cls(
            id=uuid7(),
            parent_id=parent_id,
            session_id=session_id,
            type=entry_type_of(payload),
            created_at=now_iso(),
            payload=payload,
        )

    @property
    def message(self) -> Message | None:
        return self.payload if isinstance(self.payload, Message) else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent_id": self.parent_id,
            "session_id": self.session_id,
            "type": self.type,
            "created_at": self.created_at,
            "payload": self.payload.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entry:
        kind = data["type"]
        if kind not in _PAYLOAD_TYPES:
            raise ValueError(f"unknown entry type: {kind!r}")
        payload = _PAYLOAD_TYPES[kind].from_dict(data["payload"])
        return cls.from_row(
            data["id"], data.get("parent_id"), data["session_id"], kind, data["created_at"], payload
        )

    @classmethod
    def from_row(
        cls,
        id: str,
        parent_id: str | None,
        session_id: str,
        type: str,
        created_at: str,
        payload: Payload,
    ) -> Entry:
        """An entry from trusted stored values (``type`` already checked), without ``__init__``."""
        return fast_construct(
            cls,
            {
                "id": id,
                "parent_id": parent_id,
                "session_id": session_id,
                "type": type,
                "created_at": created_at,
                "payload": payload,
            },
        )


def payload_from_json(kind: str, data: dict[str, Any]) -> Payload:
    if kind not in _PAYLOAD_TYPES:
        raise ValueError(f"unknown entry type: {kind!r}")
    return _PAYLOAD_TYPES[kind].from_dict(data)
