"""Deterministic entries and replies for chat view tests, snapshots and benchmarks."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import (
    BranchSummary,
    Compaction,
    Entry,
    ModelChange,
    Payload,
    entry_type_of,
)
from core.sessions.messages import Message, Usage
from core.sessions.persistence import Blob

SESSION_ID = "session-0001"


class EntryMaker:
    """Entries with predictable ids (``e000001``...) chained by parent id."""

    def __init__(self) -> None:
        self.count = 0
        self.last_id: str | None = None

    def __call__(self, payload: Payload) -> Entry:
        self.count += 1
        entry = Entry(
            id=f"e{self.count:06d}",
            parent_id=self.last_id,
            session_id=SESSION_ID,
            type=entry_type_of(payload),
            created_at=f"2025-01-01T00:00:{self.count % 60:02d}.000000+00:00",
            payload=payload,
        )
        self.last_id = entry.id
        return entry


def user(text: str, images: Sequence[ImageContent] = ()) -> Message:
    return Message(role="user", content=tuple(images) + ((TextContent(text),) if text else ()))


def assistant(
    text: str = "",
    *,
    thinking: str | None = None,
    calls: Sequence[ToolCallContent] = (),
    stop_reason: str = "stop",
    error: str | None = None,
    model: str = "demo/model",
    usage: Usage | None = None,
) -> Message:
    blocks: list = []
    if thinking is not None:
        blocks.append(ThinkingContent(thinking))
    if text:
        blocks.append(TextContent(text))
    blocks.extend(calls)
    return Message(
        role="assistant",
        content=tuple(blocks),
        model=model,
        provider="demo",
        usage=usage,
        stop_reason=stop_reason,  # type: ignore[arg-type]
        error=error,
    )


def tool_result(
    call_id: str, text: str, *, is_error: bool = False, images: Sequence[ImageContent] = ()
) -> Message:
    content = ((TextContent(text),) if text else ()) + tuple(images)
    return Message(role="tool_result", content=(ToolResultContent(call_id, content, is_error),))


def custom(text: str, kind: str = "info") -> Message:
    return Message(role="custom", content=(TextContent(text),), custom_type=kind)


def compaction(summary: str, first_kept_id: str | None, tokens: int) -> Compaction:
    return Compaction(summary=summary, first_kept_id=first_kept_id, tokens_before=tokens)


def branch_summary(summary: str) -> BranchSummary:
    return BranchSummary(from_id=None, summary=summary)


def model_change(model: str, thinking: str = "off") -> ModelChange:
    return ModelChange(model=model, thinking=thinking)


REPLY_MARKDOWN = """\
Here is how to read a file in **Python**, step {n}:

```python
from pathlib import Path

def read(path: str) -> str:
    return Path(path).read_text()  # {n}
```

- the `read` function returns text
- it raises `FileNotFoundError` when the file is missing
"""


def long_history(count: int) -> list[Entry]:
    """``count`` entries: user questions and Markdown replies with code, alternating."""
    make = EntryMaker()
    entries: list[Entry] = []
    for n in range(count):
        if n % 2 == 0:
            entries.append(
                make(user(f"Question {n}: how do I read a file? Please explain in detail."))
            )
        else:
            entries.append(make(assistant(REPLY_MARKDOWN.format(n=n))))
    return entries


def reply_tokens(total: int = 20_000) -> list[str]:
    """A long Markdown reply with code blocks, as ``total`` token-sized chunks."""
    paragraph = (
        "The quick brown fox jumps over the lazy dog while the compiler checks every "
        "branch of the program and the tests run on each commit to the main line. "
    )
    code = "def step_{n}(value: int) -> int:\n    total = value * {n}\n    return total + 1\n"
    parts: list[str] = []
    n = 0
    while sum(len(part) for part in parts) < total * 4 + 1000:
        parts.append(f"## Part {n}\n\n" if n % 5 == 0 else "")
        parts.append(paragraph * 3 + "\n\n")
        parts.append("```python\n" + code.format(n=n) * 3 + "```\n\n")
        parts.append(
            f"Step {n} done; moving on to the next one.\n\n- first point {n}\n- second point {n}\n\n"
        )
        n += 1
    text = "".join(parts)
    # ~4 characters per token, split on word-ish boundaries.
    tokens: list[str] = []
    position = 0
    while len(tokens) < total and position < len(text):
        end = min(len(text), position + 4)
        tokens.append(text[position:end])
        position = end
    return tokens


def png_bytes(width: int = 80, height: int = 60, color: str = "#3070c0") -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (width, height), color)
    draw = ImageDraw.Draw(image)
    draw.ellipse((width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill="#f0c020")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def pixel_bomb_png(width: int = 60_000, height: int = 60_000) -> bytes:
    """A tiny PNG whose header claims an enormous image."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\0" * 1024)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


class BlobShelf:
    """An in-memory blob loader: ``shelf.put(name, bytes)`` then ``await shelf.load(sha)``."""

    def __init__(self) -> None:
        self.blobs: dict[str, Blob] = {}
        self.requests: list[str] = []

    def put(
        self, sha: str, data: bytes, media_type: str = "image/png", width: int = 0, height: int = 0
    ) -> ImageContent:
        self.blobs[sha] = Blob(
            sha256=sha, media_type=media_type, width=width, height=height, data=data
        )
        return ImageContent(media_type=media_type, sha256=sha, width=width, height=height)

    async def load(self, sha: str) -> Blob | None:
        self.requests.append(sha)
        return self.blobs.get(sha)


def chunks(text: str, size: int) -> Iterable[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]
