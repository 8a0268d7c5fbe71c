"""The image budget's rule for the other attachments: of each kind (audio,
PDF) only the most recent ``budget`` distinct files go as data, each once;
older ones and repeats become a one-line note. Pure functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from core.sessions.content import Block, FileContent, TextContent
from core.sessions.messages import Message
from core.sessions.sniff import kind_of

_BYTES_PER_TOKEN = {"audio": 1600, "pdf": 100}
"""Rough sizes, for the estimate only: a minute of 16 kHz WAV (~1.9 MB) is
about a thousand tokens; a PDF page of ~50 KB about five hundred."""


def file_tokens(block: FileContent) -> int:
    """A rough token estimate for one file sent as data (at least an image's 1,000)."""
    return max(1_000, block.size // _BYTES_PER_TOKEN.get(kind_of(block.media_type), 100))


def apply_file_budget(
    messages: Sequence[Message], budget: int, refused: Collection[str] = ()
) -> tuple[list[Message], tuple[str, ...]]:
    """``messages`` with files beyond the budget, or of a kind the model
    ``refused``, as notes, and the sha256 of each file still sent as data
    (oldest first)."""
    chosen: list[str] = []
    per_kind: Counter[str] = Counter()
    keep: set[tuple[int, int]] = set()
    for m_index in range(len(messages) - 1, -1, -1):
        content = messages[m_index].content
        for b_index in range(len(content) - 1, -1, -1):
            block = content[b_index]
            if not isinstance(block, FileContent) or block.sha256 in chosen:
                continue
            kind = kind_of(block.media_type)
            if kind not in refused and per_kind[kind] < budget:
                per_kind[kind] += 1
                chosen.append(block.sha256)
                keep.add((m_index, b_index))
    out: list[Message] = []
    for m_index, message in enumerate(messages):
        if not any(isinstance(b, FileContent) for b in message.content):
            out.append(message)
            continue
        blocks: list[Block] = [
            _note(b) if isinstance(b, FileContent) and (m_index, b_index) not in keep else b
            for b_index, b in enumerate(message.content)
        ]
        out.append(message.with_(content=tuple(blocks)))
    return out, tuple(reversed(chosen))


def file_shas(messages: Sequence[Message]) -> tuple[str, ...]:
    """The files the messages still send as data."""
    return tuple(
        dict.fromkeys(b.sha256 for m in messages for b in m.content if isinstance(b, FileContent))
    )


def _note(block: FileContent) -> TextContent:
    return TextContent(f"[file omitted: {block.describe()}]")
