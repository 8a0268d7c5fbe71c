"""One realistic session tree for the export, overview and HTML tests.

::

    system -- model_change(anthropic/claude-x, high) -- u1 "Plant oaks?" [image]
      -- a1 (thinking+signature, text, tool call read_file) -- t1 (tool result)
      -- a2 "Oaks like sun."  (label "answer")
           +-- u2 "And birches?" -- a3 "Birches like damp."        (branch A)
           |     \\-- a3b "Birches are fine anywhere." (alternative)
           \\-- branch_summary -- u3 "What about pines?" -- compaction(kept from u3)
                 -- note (custom) -- a4 "Pines <script>alert(1)</script> like sand."
                 -- u4 "Thanks" -- a5 "You are welcome </textarea>"   (leaf at a4)

The leaf is a4, which has a child: the file must still say a4 is the position.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass

from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, entry_type_of
from core.sessions.messages import Message, Usage
from core.sessions.persistence import Blob, SessionInfo

SESSION_ID = "019a0000-0000-7000-8000-000000000000"


def png(color: tuple[int, int, int]) -> Blob:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3, 2), color).save(out, "PNG")
    data = out.getvalue()
    return Blob(hashlib.sha256(data).hexdigest(), "image/png", 3, 2, data)


@dataclass(frozen=True)
class Sample:
    info: SessionInfo
    entries: list[Entry]
    labels: dict[str, str]
    blobs: dict[str, Blob]
    ids: dict[str, str]
    """The keys of the picture above -> entry ids."""


def sample_session() -> Sample:
    blob = png((0, 128, 0))
    entries: list[Entry] = []

    def add(key: str, parent: str | None, payload) -> str:
        entry_id = f"019a0000-0000-7000-8000-0000000000{len(entries) + 1:02d}"
        created = f"2026-03-01T10:00:{len(entries):02d}.000000Z"
        entries.append(
            Entry(entry_id, parent, SESSION_ID, entry_type_of(payload), created, payload)
        )
        ids[key] = entry_id
        return entry_id

    ids: dict[str, str] = {}
    usage = Usage(100, 20, 50, 10, 5, 0.001, 0.002, 0.0001, 0.0002)
    claude = {"model": "anthropic/claude-x", "provider": "litellm"}
    add("system", None, Message(role="system", content=(TextContent("Be brief."),)))
    add("model", ids["system"], ModelChange(model="anthropic/claude-x", thinking="high"))
    image = ImageContent(blob.media_type, blob.sha256, blob.width, blob.height)
    add("u1", ids["model"], Message(role="user", content=(TextContent("Plant oaks?"), image)))
    add(
        "a1",
        ids["u1"],
        Message(
            role="assistant",
            content=(
                ThinkingContent("Check the notes first.", signature="sig-123"),
                TextContent("Let me read the notes."),
                ToolCallContent(
                    "call_1", "read_file", {"path": "notes.md"}, '{"path": "notes.md"}'
                ),
            ),
            usage=usage,
            stop_reason="tool_use",
            **claude,
        ),
    )
    add(
        "t1",
        ids["a1"],
        Message(
            role="tool_result",
            content=(ToolResultContent("call_1", (TextContent("oaks: full sun"),)),),
        ),
    )
    add(
        "a2",
        ids["t1"],
        Message(
            role="assistant",
            content=(TextContent("Oaks like **sun**.\n\n```python\nprint('oak')\n```"),),
            usage=usage,
            stop_reason="stop",
            **claude,
        ),
    )
    add("u2", ids["a2"], Message(role="user", content=(TextContent("And birches?"),)))
    add(
        "a3",
        ids["u2"],
        Message(role="assistant", content=(TextContent("Birches like damp."),), **claude),
    )
    add(
        "a3b",
        ids["u2"],
        Message(
            role="assistant",
            content=(TextContent("Birches are fine anywhere."),),
            model="openai/gpt-x",
            provider="litellm",
            usage=Usage(40, 8, 0, 0, 2, 0.0004, 0.0008),
            stop_reason="stop",
        ),
    )
    add("bs", ids["a2"], BranchSummary(from_id=ids["u2"], summary="We talked about birches."))
    add("u3", ids["bs"], Message(role="user", content=(TextContent("What about pines?"),)))
    add(
        "compaction",
        ids["u3"],
        Compaction("Oaks like sun; birches were discussed.", ids["u3"], 1234, {"model": "m"}),
    )
    add(
        "note",
        ids["compaction"],
        Message(role="custom", content=(TextContent("Compacted."),), custom_type="notice"),
    )
    add(
        "a4",
        ids["note"],
        Message(
            role="assistant",
            content=(TextContent("Pines <script>alert(1)</script> like sand."),),
            usage=usage,
            stop_reason="stop",
            **claude,
        ),
    )
    add("u4", ids["a4"], Message(role="user", content=(TextContent("Thanks"),)))
    add(
        "a5",
        ids["u4"],
        Message(role="assistant", content=(TextContent("You are welcome </textarea>"),), **claude),
    )
    info = SessionInfo(
        id=SESSION_ID,
        title="Trees for the garden",
        created_at="2026-03-01T09:59:59.000000Z",
        updated_at=entries[-1].created_at,
        leaf_id=ids["a4"],
        title_set_by_user=True,
        cwd="/home/ada/garden",
    )
    labels = {ids["a2"]: "answer", ids["u3"]: "pines"}
    return Sample(info, entries, labels, {blob.sha256: blob}, ids)
