"""Chat-completions stream chunks to stream events, for both readers of them:
httpx (OpenAI-compatible endpoints: the chunks' JSON as parsed, no
models built) and litellm (everything else: its own chunk objects).

Every value taken from a chunk is checked here (:mod:`core.values`): a value
of the wrong type or size raises :class:`~core.values.BadValue`, which ends
the reply as a ``bad_response`` with what arrived before it kept."""

from __future__ import annotations

from typing import Any

from core import values
from core.providers.base import (
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from core.providers.cost import cost_for
from core.providers.outcome import final_events
from core.sessions.messages import StopReason, Usage

_FINISH: dict[str, StopReason] = {
    "stop": "stop",
    "end_turn": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}


class ChunkReader:
    """Translates one stream's chunks; remembers its usage and finish reason."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.usage: Usage | None = None
        self.finish: str | None = None
        self.error: ProviderError | None = None
        self.has_content = False

    def events(self, chunk: Any) -> list[StreamEvent]:
        raw_usage = _field(chunk, "usage")
        if raw_usage is not None:
            self.usage = usage(raw_usage)
        choices = _field(chunk, "choices")
        if not choices:
            return []
        choice = choices[0]
        reason = values.optional_text(_field(choice, "finish_reason"), "the finish reason")
        if reason:
            self.finish = reason
        delta = _field(choice, "delta")
        if delta is None:
            return []
        events: list[StreamEvent] = []
        # Some OpenAI-compatible servers (vLLM, GLM) call it "reasoning".
        reasoning = _field(delta, "reasoning_content") or _field(delta, "reasoning")
        if reasoning:
            events.append(ThinkingDelta(values.text(reasoning, "the reply's thinking")))
        content = _field(delta, "content")
        if content:
            events.append(TextDelta(values.text(content, "the reply's text")))
        calls = _field(delta, "tool_calls") or []
        if not isinstance(calls, list):
            raise values.BadValue("the reply's tool calls are not a list")
        for call in calls:
            events.append(_tool_call(call))
        if events:
            self.has_content = True
        return events

    def ending(self) -> list[StreamEvent]:
        """Usage (priced), then how the stream ended; no finish reason is an interruption."""
        error = self.error
        stop_reason: StopReason | None = None
        if error is None and self.finish is not None:
            if self.finish == "content_filter":
                error = ProviderError("refused", "the provider's content filter stopped the reply")
            else:
                stop_reason = _FINISH.get(self.finish, "stop")
        priced = cost_for(self.model, self.usage) if self.usage is not None else None
        return final_events(priced, stop_reason, error, self.has_content)


def _tool_call(call: Any) -> ToolCallDelta:
    function = _field(call, "function")
    return ToolCallDelta(
        index=values.optional_count(_field(call, "index"), "a tool call's index", MAX_TOOL_INDEX),
        id=values.optional_text(_field(call, "id"), "a tool call's id") or None,
        name=values.optional_text(_field(function, "name"), "a tool call's name") or None,
        arguments=values.optional_text(_field(function, "arguments"), "a tool call's arguments")
        or "",
    )


MAX_TOOL_INDEX = 10_000
"""The highest tool call index taken (calls are numbered from 0 in a reply)."""


def usage(raw: Any) -> Usage:
    """OpenAI-style usage, where prompt tokens include cached ones, split into parts."""

    def tokens(part: Any, name: str) -> int:
        return values.optional_count(_field(part, name), f"the usage's {name}")

    prompt = tokens(raw, "prompt_tokens")
    cache_read = tokens(_field(raw, "prompt_tokens_details"), "cached_tokens")
    cache_write = tokens(raw, "cache_creation_input_tokens")
    reasoning = tokens(_field(raw, "completion_tokens_details"), "reasoning_tokens")
    return Usage(
        input_tokens=max(0, prompt - cache_read - cache_write),
        output_tokens=tokens(raw, "completion_tokens"),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )


def _field(item: Any, name: str) -> Any:
    """A field of a chunk part: the httpx path hands over the JSON (dicts),
    litellm its own objects."""
    if item is None:
        return None
    if isinstance(item, dict):
        return item.get(name)
    return getattr(item, name, None)
