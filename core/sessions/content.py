"""Content blocks: the parts a message is made of.

Each block is a frozen dataclass with a ``type`` tag; ``to_dict``/``from_dict``
round-trip losslessly through JSON-compatible dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from core.sessions.file_facts import duration_text


@dataclass(frozen=True)
class TextContent:
    text: str
    type: str = field(default="text", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ImageContent:
    """An image; the bytes live in the blob table, keyed by ``sha256``."""

    media_type: str
    sha256: str
    width: int
    height: int
    type: str = field(default="image", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "image",
            "media_type": self.media_type,
            "sha256": self.sha256,
            "width": self.width,
            "height": self.height,
        }

    def describe(self) -> str:
        return f"{self.media_type} {self.width}x{self.height}"


@dataclass(frozen=True)
class FileContent:
    """An attached file other than an image (audio, a PDF); the bytes live in
    the blob table, keyed by ``sha256``. ``name`` is the file's name as given;
    ``seconds`` (audio) and ``pages`` (PDF) are known when its headers say."""

    media_type: str
    sha256: str
    name: str
    size: int
    seconds: float | None = None
    pages: int | None = None
    type: str = field(default="file", init=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "file",
            "media_type": self.media_type,
            "sha256": self.sha256,
            "name": self.name,
            "size": self.size,
        }
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.pages is not None:
            out["pages"] = self.pages
        return out

    def describe(self) -> str:
        facts = [self.name, self.media_type, f"{self.size / 1048576:.1f} MB"]
        if self.seconds is not None:
            facts.append(duration_text(self.seconds))
        if self.pages is not None:
            facts.append(f"{self.pages} page" + ("" if self.pages == 1 else "s"))
        return ", ".join(facts)


@dataclass(frozen=True)
class ThinkingContent:
    """Model reasoning. ``signature`` is only valid when sent back to the same model."""

    text: str
    signature: str | None = None
    redacted: bool = False
    type: str = field(default="thinking", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "thinking",
            "text": self.text,
            "signature": self.signature,
            "redacted": self.redacted,
        }


@dataclass(frozen=True)
class ToolCallContent:
    """A tool call. ``raw_arguments`` is the JSON text as the model sent it;
    ``arguments`` is its parsed form (empty when it did not parse)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""
    type: str = field(default="tool_call", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "tool_call",
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "raw_arguments": self.raw_arguments,
        }


@dataclass(frozen=True)
class ToolResultContent:
    tool_call_id: str
    content: tuple[TextContent | ImageContent, ...]
    is_error: bool = False
    type: str = field(default="tool_result", init=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "tool_call_id": self.tool_call_id,
            "content": [c.to_dict() for c in self.content],
            "is_error": self.is_error,
        }

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.content if isinstance(c, TextContent))


Block = Union[
    TextContent, ImageContent, FileContent, ThinkingContent, ToolCallContent, ToolResultContent
]


def block_from_dict(data: dict[str, Any]) -> Block:
    kind = data.get("type")
    if kind == "text":
        text = data["text"]
        if not isinstance(text, str):
            raise ValueError("text block: text must be a string")
        block = object.__new__(TextContent)
        block.__dict__.update(text=text, type="text")  # the hot path of decoding a path
        return block
    if kind == "image":
        return ImageContent(
            media_type=data["media_type"],
            sha256=data["sha256"],
            width=int(data["width"]),
            height=int(data["height"]),
        )
    if kind == "file":
        return FileContent(
            media_type=str(data["media_type"]),
            sha256=str(data["sha256"]),
            name=str(data["name"]),
            size=int(data["size"]),
            seconds=float(data["seconds"]) if data.get("seconds") is not None else None,
            pages=int(data["pages"]) if data.get("pages") is not None else None,
        )
    if kind == "thinking":
        return ThinkingContent(
            text=data.get("text", ""),
            signature=data.get("signature"),
            redacted=bool(data.get("redacted", False)),
        )
    if kind == "tool_call":
        return ToolCallContent(
            id=data["id"],
            name=data["name"],
            arguments=dict(data.get("arguments") or {}),
            raw_arguments=data.get("raw_arguments", ""),
        )
    if kind == "tool_result":
        inner: list[TextContent | ImageContent] = []
        for c in (block_from_dict(c) for c in data.get("content", [])):
            if not isinstance(c, (TextContent, ImageContent)):
                raise ValueError(f"tool result may hold only text and images, not {c.type}")
            inner.append(c)
        return ToolResultContent(
            tool_call_id=data["tool_call_id"],
            content=tuple(inner),
            is_error=bool(data.get("is_error", False)),
        )
    raise ValueError(f"unknown content block type: {kind!r}")
