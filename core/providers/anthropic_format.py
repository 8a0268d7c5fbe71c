"""Provider-neutral messages to the Anthropic Messages API's request body.

Context rules (which thinking keeps its signature, tool-call id normalization,
synthetic results) are applied before this by the context builder; this module
only translates, plus what the wire itself demands: consecutive user-side
turns merge into one message, empty turns are left out, and thinking without a
signature (which the API would reject) is dropped.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from core.providers.base import ChatRequest
from core.sessions.content import (
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.messages import Message

THINKING_BUDGETS = {"off": 0, "low": 2048, "medium": 8192, "high": 24576}
DEFAULT_MAX_TOKENS = 8192
THINKING_HEADROOM = 4096
"""Tokens left for the visible answer above the thinking budget."""

_CACHE = {"type": "ephemeral"}


def request_params(request: ChatRequest) -> dict[str, Any]:
    """Keyword arguments for ``client.messages.create`` (without ``stream``)."""
    model = request.model.removeprefix("anthropic/")
    max_tokens = request.max_tokens or DEFAULT_MAX_TOKENS
    params: dict[str, Any] = {
        "model": model,
        "messages": to_messages(request.messages, request.images),
    }
    budget = THINKING_BUDGETS.get(request.thinking, 0)
    if budget:
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        max_tokens = max(max_tokens, budget + THINKING_HEADROOM)
    params["max_tokens"] = max_tokens
    system = _system_text(request)
    if system:
        params["system"] = [{"type": "text", "text": system, "cache_control": _CACHE}]
    if request.tools:
        params["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    return params


def _system_text(request: ChatRequest) -> str:
    parts = [request.system] if request.system else []
    parts += [m.text for m in request.messages if m.role == "system" and m.text]
    return "\n\n".join(parts)


def to_messages(messages: tuple[Message, ...], images: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """Wire messages, with a cache breakpoint on the last block of the last user turn."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role in ("system", "custom"):
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for block in message.content for b in _blocks(block, images)]
        if not blocks:
            continue
        if wire and wire[-1]["role"] == role == "user":
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for turn in reversed(wire):
        if turn["role"] == "user":
            turn["content"][-1] = {**turn["content"][-1], "cache_control": _CACHE}
            break
    return wire


def _blocks(block: Any, images: Mapping[str, bytes]) -> list[dict[str, Any]]:
    if isinstance(block, TextContent):
        return [{"type": "text", "text": block.text}] if block.text else []
    if isinstance(block, ImageContent):
        return [_image(block, images)]
    if isinstance(block, FileContent):
        return [_document(block, images)]
    if isinstance(block, ThinkingContent):
        if block.redacted:
            return [{"type": "redacted_thinking", "data": block.text}]
        if block.signature:
            return [{"type": "thinking", "thinking": block.text, "signature": block.signature}]
        return []
    if isinstance(block, ToolCallContent):
        return [{"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}]
    if isinstance(block, ToolResultContent):
        inner = [
            _image(c, images) if isinstance(c, ImageContent) else {"type": "text", "text": c.text}
            for c in block.content
            if not (isinstance(c, TextContent) and not c.text)
        ]
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.tool_call_id,
            "content": inner,
        }
        if block.is_error:
            result["is_error"] = True
        return [result]
    return []


def _image(block: ImageContent, images: Mapping[str, bytes]) -> dict[str, Any]:
    data = images.get(block.sha256)
    if data is None:
        return {"type": "text", "text": f"[image unavailable: {block.describe()}]"}
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": block.media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }


def _document(block: FileContent, files: Mapping[str, bytes]) -> dict[str, Any]:
    """A PDF as a document block; other files (Claude takes no audio) as a note."""
    data = files.get(block.sha256)
    if data is None or block.media_type != "application/pdf":
        return {"type": "text", "text": f"[file not sent: {block.describe()}]"}
    return {
        "type": "document",
        "source": {
            "type": "base64",
            "media_type": block.media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }
