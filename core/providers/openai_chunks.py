"""Chat-completions stream chunks to stream events, for both readers of them:
the openai SDK (OpenAI-compatible endpoints) and litellm (everything else),
whose chunks have the same shape."""

from __future__ import annotations

from typing import Any

from core.messages import StopReason, Usage
from core.providers.base import (
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from core.providers.cost import cost_for
from core.providers.outcome import final_events

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
        raw_usage = getattr(chunk, "usage", None)
        if raw_usage is not None:
            self.usage = usage(raw_usage)
        if not chunk.choices:
            return []
        choice = chunk.choices[0]
        reason = getattr(choice, "finish_reason", None)
        if reason:
            self.finish = reason
        delta = choice.delta
        if delta is None:
            return []
        events: list[StreamEvent] = []
        # Some OpenAI-compatible servers (vLLM, GLM) call it "reasoning".
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if reasoning and isinstance(reasoning, str):
            events.append(ThinkingDelta(reasoning))
        if delta.content:
            events.append(TextDelta(delta.content))
        for call in getattr(delta, "tool_calls", None) or []:
            function = call.function
            events.append(
                ToolCallDelta(
                    index=call.index or 0,
                    id=call.id or None,
                    name=getattr(function, "name", None) or None,
                    arguments=getattr(function, "arguments", None) or "",
                )
            )
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


def usage(raw: Any) -> Usage:
    """OpenAI-style usage, where prompt tokens include cached ones, split into parts."""
    prompt = getattr(raw, "prompt_tokens", 0) or 0
    details = getattr(raw, "prompt_tokens_details", None)
    cache_read = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    cache_write = getattr(raw, "cache_creation_input_tokens", 0) or 0
    completion = getattr(raw, "completion_tokens_details", None)
    reasoning = (getattr(completion, "reasoning_tokens", 0) or 0) if completion is not None else 0
    return Usage(
        input_tokens=max(0, prompt - cache_read - cache_write),
        output_tokens=getattr(raw, "completion_tokens", 0) or 0,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )
