"""Messages and usage."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from core import values
from core.sessions.content import (
    Block,
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
    block_from_dict,
)


def fast_construct(cls, values: dict[str, Any]):
    """Build a frozen dataclass from already-valid field values without ``__init__``.

    Decoding a 10,000-entry path builds tens of thousands of these; the frozen
    ``__init__`` (one ``object.__setattr__`` per field) was most of the cost.
    ``values`` must name every field; callers validate what needs validating.
    """
    instance = object.__new__(cls)
    instance.__dict__.update(values)
    return instance


Role = Literal["system", "user", "assistant", "tool_result", "custom"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool_result", "custom")

StopReason = Literal["stop", "length", "tool_use", "error", "aborted", "interrupted"]
STOP_REASONS: tuple[str, ...] = ("stop", "length", "tool_use", "error", "aborted", "interrupted")
"""``aborted``: the user stopped the reply. ``interrupted``: the stream ended
without a finish reason (the connection dropped)."""


@dataclass(frozen=True)
class Usage:
    """Token counts and their cost in USD, part by part."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    input_cost: float = 0.0
    output_cost: float = 0.0
    cache_read_cost: float = 0.0
    cache_write_cost: float = 0.0
    estimated: bool = False
    """The server said no usage: the counts are estimated here
    (:func:`core.tokens.estimated_usage`), shown with ``~``. A sum holding any
    estimate is one."""

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    @property
    def context_tokens(self) -> int:
        """Tokens the model saw as its prompt plus what it wrote."""
        return self.total_tokens

    @property
    def cost(self) -> float:
        return self.input_cost + self.output_cost + self.cache_read_cost + self.cache_write_cost

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            input_cost=self.input_cost + other.input_cost,
            output_cost=self.output_cost + other.output_cost,
            cache_read_cost=self.cache_read_cost + other.cache_read_cost,
            cache_write_cost=self.cache_write_cost + other.cache_write_cost,
            estimated=self.estimated or other.estimated,
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost": {
                "input": self.input_cost,
                "output": self.output_cost,
                "cache_read": self.cache_read_cost,
                "cache_write": self.cache_write_cost,
                "total": self.cost,
            },
        }
        if self.estimated:
            out["estimated"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        """Counts are checked (:func:`core.values.optional_count`): a saved or
        imported usage too large to add up raises :class:`~core.values.BadValue`."""
        cost = data.get("cost") or {}
        tokens = values.optional_count
        return fast_construct(
            cls,
            {
                "input_tokens": tokens(data.get("input_tokens"), "input tokens"),
                "output_tokens": tokens(data.get("output_tokens"), "output tokens"),
                "cache_read_tokens": tokens(data.get("cache_read_tokens"), "cache reads"),
                "cache_write_tokens": tokens(data.get("cache_write_tokens"), "cache writes"),
                "reasoning_tokens": tokens(data.get("reasoning_tokens"), "reasoning tokens"),
                "input_cost": float(cost.get("input", 0.0)),
                "output_cost": float(cost.get("output", 0.0)),
                "cache_read_cost": float(cost.get("cache_read", 0.0)),
                "cache_write_cost": float(cost.get("cache_write", 0.0)),
                "estimated": data.get("estimated") is True,
            },
        )


@dataclass(frozen=True)
class Message:
    role: Role
    content: tuple[Block, ...] = ()
    model: str | None = None
    provider: str | None = None
    usage: Usage | None = None
    stop_reason: StopReason | None = None
    error: str | None = None
    custom_type: str | None = None
    """For ``custom`` messages: what kind of note this is (shown, never sent)."""
    meta: dict[str, Any] = field(default_factory=dict)
    """Free-form extras that must survive a round trip (e.g. fields from imports)."""
    agent: str | None = None
    """For ``assistant`` messages: the round-table agent (``[[agents]]``) that
    wrote it; None for the session's own model (and every older message)."""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"unknown role: {self.role!r}")
        if self.stop_reason is not None and self.stop_reason not in STOP_REASONS:
            raise ValueError(f"unknown stop reason: {self.stop_reason!r}")

    @property
    def text(self) -> str:
        """The visible text: text blocks joined (tool result text for tool results)."""
        parts: list[str] = []
        for block in self.content:
            if isinstance(block, TextContent):
                parts.append(block.text)
            elif isinstance(block, ToolResultContent):
                parts.append(block.text)
        return "\n".join(parts)

    @property
    def tool_calls(self) -> list[ToolCallContent]:
        return [b for b in self.content if isinstance(b, ToolCallContent)]

    @property
    def tool_results(self) -> list[ToolResultContent]:
        return [b for b in self.content if isinstance(b, ToolResultContent)]

    @property
    def thinking(self) -> list[ThinkingContent]:
        return [b for b in self.content if isinstance(b, ThinkingContent)]

    @property
    def images(self) -> list[ImageContent]:
        found: list[ImageContent] = []
        for block in self.content:
            if isinstance(block, ImageContent):
                found.append(block)
            elif isinstance(block, ToolResultContent):
                found.extend(c for c in block.content if isinstance(c, ImageContent))
        return found

    def with_(self, **changes: Any) -> Message:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "role": self.role,
            "content": [b.to_dict() for b in self.content],
        }
        if self.model is not None:
            data["model"] = self.model
        if self.provider is not None:
            data["provider"] = self.provider
        if self.usage is not None:
            data["usage"] = self.usage.to_dict()
        if self.stop_reason is not None:
            data["stop_reason"] = self.stop_reason
        if self.error is not None:
            data["error"] = self.error
        if self.custom_type is not None:
            data["custom_type"] = self.custom_type
        if self.meta:
            data["meta"] = self.meta
        if self.agent is not None:
            data["agent"] = self.agent
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        role = data["role"]
        stop_reason = data.get("stop_reason")
        if role not in ROLES:
            raise ValueError(f"unknown role: {role!r}")
        if stop_reason is not None and stop_reason not in STOP_REASONS:
            raise ValueError(f"unknown stop reason: {stop_reason!r}")
        usage = data.get("usage")
        return fast_construct(
            cls,
            {
                "role": role,
                "content": tuple([block_from_dict(b) for b in data.get("content", ())]),
                "model": data.get("model"),
                "provider": data.get("provider"),
                "usage": Usage.from_dict(usage) if usage is not None else None,
                "stop_reason": stop_reason,
                "error": data.get("error"),
                "custom_type": data.get("custom_type"),
                "meta": dict(data["meta"]) if "meta" in data else {},
                "agent": _agent_name(data.get("agent")),
            },
        )


AGENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
"""What ``@Name`` can address: a letter, then letters, digits, ``_`` or ``-``
(so a name is safe in every export's markup as it is)."""


def _agent_name(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and AGENT_NAME.fullmatch(value)):
        return value
    raise ValueError("an agent name must be a letter then letters, digits, _ or - (at most 32)")


def user_text(text: str, images: tuple[ImageContent | FileContent, ...] = ()) -> Message:
    """A user message with text and optional images and files."""
    blocks: tuple[Block, ...] = tuple(images) + ((TextContent(text),) if text else ())
    return Message(role="user", content=blocks)
