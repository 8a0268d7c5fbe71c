"""Fold stream events into the final assistant :class:`Message`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core import values
from core.providers.base import (
    Done,
    ErrorEvent,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)
from core.sessions.content import Block, TextContent, ThinkingContent, ToolCallContent
from core.sessions.messages import Message, StopReason, Usage


@dataclass
class _Part:
    """A block being streamed: its kind and the pieces received so far."""

    kind: str  # text | thinking | redacted | tool
    pieces: list[str] = field(default_factory=list)
    signature: str | None = None
    tool_index: int | None = None
    tool_id: str | None = None
    tool_name: str | None = None


class MessageBuilder:
    """Collects events in arrival order; :meth:`finish` makes the message.

    Blocks keep the order in which they started. Text and thinking deltas
    extend the block before them when it is of the same kind; tool call deltas
    join their call by ``index`` wherever it is.
    """

    def __init__(self, model: str, provider: str | None = None, agent: str | None = None) -> None:
        self.model = model
        self.provider = provider
        self.agent = agent
        """The round-table agent writing (saved with every snapshot, so a
        recovered checkpoint keeps its author too)."""
        self.usage: Usage | None = None
        self.stop_reason: StopReason | None = None
        self.error: ProviderError | None = None
        self._parts: list[_Part] = []
        self._tools: dict[int, _Part] = {}

    @property
    def has_content(self) -> bool:
        """Whether any text, thinking or tool call has arrived."""
        return bool(self._parts)

    @property
    def text(self) -> str:
        """The text received so far."""
        return "".join("".join(p.pieces) for p in self._parts if p.kind == "text")

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, TextDelta):
            self._text(event)
        elif isinstance(event, ThinkingDelta):
            self._thinking(event)
        elif isinstance(event, ToolCallDelta):
            self._tool(event)
        elif isinstance(event, UsageEvent):
            self.usage = event.usage
        elif isinstance(event, Done):
            self.stop_reason = event.stop_reason
        elif isinstance(event, ErrorEvent):
            self.error = event.error
            self.stop_reason = "error"

    def finish(self) -> Message:
        """The message so far. A stream that never said how it ended is ``interrupted``."""
        return self._message(self.stop_reason or "interrupted")

    def finish_aborted(self) -> Message:
        """The message as it stands when the user stopped it; partial content is kept."""
        return self._message("aborted")

    def snapshot(self, why: str) -> Message:
        """The message so far, as saved if the reply went no further: ``interrupted``, with ``why``."""
        return self._message("interrupted").with_(error=why)

    # --- internals ---------------------------------------------------------

    def _last(self, kind: str) -> _Part | None:
        if self._parts and self._parts[-1].kind == kind:
            return self._parts[-1]
        return None

    def _start(self, kind: str) -> _Part:
        part = _Part(kind)
        self._parts.append(part)
        return part

    def _text(self, event: TextDelta) -> None:
        if event.text:
            (self._last("text") or self._start("text")).pieces.append(event.text)

    def _thinking(self, event: ThinkingDelta) -> None:
        if event.redacted:
            self._start("redacted").pieces.append(event.text)
            return
        part = None if event.new_block else self._last("thinking")
        if part is None:
            if not (event.text or event.signature or event.new_block):
                return
            part = self._start("thinking")
        part.pieces.append(event.text)
        if event.signature:
            part.signature = (part.signature or "") + event.signature

    def _tool(self, event: ToolCallDelta) -> None:
        part = self._tools.get(event.index)
        if part is None:
            part = self._start("tool")
            part.tool_index = event.index
            self._tools[event.index] = part
        if event.id:
            part.tool_id = event.id
        if event.name:
            part.tool_name = event.name
        part.pieces.append(event.arguments)

    def _message(self, stop_reason: StopReason) -> Message:
        meta: dict[str, Any] = {}
        if self.error is not None:
            meta["error_kind"] = self.error.kind
        return Message(
            role="assistant",
            content=tuple(self._block(p) for p in self._parts),
            model=self.model,
            provider=self.provider,
            usage=self.usage,
            stop_reason=stop_reason,
            error=str(self.error) if self.error is not None else None,
            meta=meta,
            agent=self.agent,
        )

    @staticmethod
    def _block(part: _Part) -> Block:
        joined = "".join(part.pieces)
        if part.kind == "text":
            return TextContent(joined)
        if part.kind == "thinking":
            return ThinkingContent(joined, signature=part.signature)
        if part.kind == "redacted":
            return ThinkingContent(joined, redacted=True)
        return ToolCallContent(
            id=part.tool_id or f"call_{part.tool_index}",
            name=part.tool_name or "",
            arguments=parse_arguments(joined),
            raw_arguments=joined,
        )


def parse_arguments(raw: str) -> dict[str, Any]:
    """The arguments object, or ``{}`` when the JSON is malformed, not an
    object, or refused by :func:`core.values.loads` (too deep, huge numbers)."""
    if not raw.strip():
        return {}
    try:
        value = values.loads(raw, "the tool call's arguments")
    except values.BadValue:
        return {}
    return value if isinstance(value, dict) else {}
