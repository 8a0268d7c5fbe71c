"""Provider-neutral messages to OpenAI chat-completions messages (litellm's input).

Thinking blocks are dropped: reasoning only crosses models as text when the
context rules turned it into text already, and providers reject their own
reasoning sent back as content. Tool results become ``role: tool`` messages;
as those hold only text, images in tool results follow in one user message.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from core.providers.base import ChatRequest
from core.sessions.content import (
    FileContent,
    ImageContent,
    TextContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.messages import Message


def to_messages(request: ChatRequest) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    if request.system:
        wire.append({"role": "system", "content": request.system})
    return wire + convert(request.messages, request.images)


def convert(
    messages: Iterable[Message], images: Mapping[str, bytes], *, raw_arguments: bool = False
) -> list[dict[str, Any]]:
    """User, system, assistant and tool-result messages as chat-completions
    messages; ``images`` maps an image's sha256 to its bytes (images without
    bytes become a text note). ``raw_arguments`` sends tool-call arguments as
    the model wrote them rather than re-encoded."""
    wire: list[dict[str, Any]] = []
    pending_images: list[dict[str, Any]] = []
    for message in messages:
        if message.role not in ("tool_result", "user") and pending_images:
            wire.append({"role": "user", "content": pending_images})
            pending_images = []
        if message.role == "tool_result":
            pending_images += _tool_results(message, images, wire)
        elif message.role == "assistant":
            _assistant(message, wire, raw_arguments)
        elif message.role in ("user", "system"):
            # A tool's images and the user's next message: one user turn, not two.
            parts = (pending_images if message.role == "user" else []) + _parts(
                message.content, images
            )
            if message.role == "user":
                pending_images = []
            if parts:
                wire.append({"role": message.role, "content": _compact(parts)})
    if pending_images:
        wire.append({"role": "user", "content": pending_images})
    return wire


def tools(request: ChatRequest) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in request.tools
    ]


def _assistant(message: Message, wire: list[dict[str, Any]], raw_arguments: bool) -> None:
    text = "".join(b.text for b in message.content if isinstance(b, TextContent))
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {
                "name": c.name,
                "arguments": (raw_arguments and c.raw_arguments) or json.dumps(c.arguments),
            },
        }
        for c in message.content
        if isinstance(c, ToolCallContent)
    ]
    if not text and not calls:
        return
    entry: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        entry["tool_calls"] = calls
    wire.append(entry)


def _tool_results(
    message: Message, images: Mapping[str, bytes], wire: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Append one tool message per result; return the image parts they carried."""
    carried: list[dict[str, Any]] = []
    for result in message.content:
        if not isinstance(result, ToolResultContent):
            continue
        lines = [result.text] if result.text else []
        for image in (c for c in result.content if isinstance(c, ImageContent)):
            part = _image(image, images)
            if part["type"] == "image_url":
                lines.append(f"[image {image.describe()} attached below]")
                carried.append(part)
            else:
                lines.append(part["text"])
        text = "\n".join(lines)
        if result.is_error:
            text = f"Error: {text}"
        wire.append({"role": "tool", "tool_call_id": result.tool_call_id, "content": text})
    return carried


def _parts(blocks: tuple[Any, ...], images: Mapping[str, bytes]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextContent) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append(_image(block, images))
        elif isinstance(block, FileContent):
            parts.append(_file(block, images))
    return parts


def _compact(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """Plain text as a string (accepted everywhere); anything richer as parts."""
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def _image(block: ImageContent, images: Mapping[str, bytes]) -> dict[str, Any]:
    data = images.get(block.sha256)
    if data is None:
        return {"type": "text", "text": f"[image unavailable: {block.describe()}]"}
    url = f"data:{block.media_type};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


_AUDIO_FORMATS = {"audio/wav": "wav", "audio/mpeg": "mp3"}
"""The audio ``input_audio`` takes; other audio goes as a file part (litellm's
form for Gemini and others)."""


def _file(block: FileContent, files: Mapping[str, bytes]) -> dict[str, Any]:
    data = files.get(block.sha256)
    if data is None:
        return {"type": "text", "text": f"[file unavailable: {block.describe()}]"}
    encoded = base64.b64encode(data).decode("ascii")
    audio_format = _AUDIO_FORMATS.get(block.media_type)
    if audio_format is not None:
        return {"type": "input_audio", "input_audio": {"data": encoded, "format": audio_format}}
    return {
        "type": "file",
        "file": {"filename": block.name, "file_data": f"data:{block.media_type};base64,{encoded}"},
    }
