"""Paths of entries for compaction tests: hand-built chains and a hypothesis
strategy for long conversations with tool loops, images and earlier compactions."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from core.sessions.content import ImageContent, TextContent, ToolCallContent, ToolResultContent
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange
from core.sessions.messages import Message, Usage

MODEL = "anthropic/claude-x"


def chain(*payloads: Any, start: int = 0) -> list[Entry]:
    path: list[Entry] = []
    for i, payload in enumerate(payloads, start):
        path.append(
            Entry(
                id=f"e{i:04d}",
                parent_id=path[-1].id if path else None,
                session_id="s",
                type=Entry.new("s", None, payload).type,
                created_at=f"2026-01-01T00:00:00.{i:06d}Z",
                payload=payload,
            )
        )
    return path


def extend(path: list[Entry], *payloads: Any) -> list[Entry]:
    more = chain(*payloads, start=len(path))
    if path and more:
        first = more[0]
        more[0] = Entry(
            first.id, path[-1].id, first.session_id, first.type, first.created_at, first.payload
        )
    return path + more


def user(text: str, *images: ImageContent) -> Message:
    return Message(role="user", content=tuple(images) + (TextContent(text),))


def assistant(
    text: str, *calls: ToolCallContent, usage: Usage | None = None, stop: str | None = None
) -> Message:
    return Message(
        role="assistant",
        content=((TextContent(text),) if text else ()) + calls,
        model=MODEL,
        usage=usage,
        stop_reason=stop or ("tool_use" if calls else "stop"),
    )


def call(call_id: str, name: str = "read_file", **arguments: Any) -> ToolCallContent:
    return ToolCallContent(call_id, name, arguments, "{}")


def result(call_id: str, text: str, error: bool = False) -> Message:
    return Message(
        role="tool_result", content=(ToolResultContent(call_id, (TextContent(text),), error),)
    )


def image(n: int, width: int = 800, height: int = 600) -> ImageContent:
    return ImageContent("image/png", f"{n:064x}", width, height)


def marker(entry: Entry) -> str:
    """Every generated message's text starts with its entry id: ``<e0007>``."""
    return f"<{entry.id}>"


# --- hypothesis --------------------------------------------------------------


@st.composite
def long_paths(draw) -> list[Entry]:
    """A conversation of turns: a user message, then zero or more tool steps
    (an assistant message with calls, then results, in one message or several),
    then usually an answer. Sizes vary from a few to thousands of tokens; there
    may be model changes, branch summaries, custom notes and earlier compactions.
    Every message's text begins with a marker naming its entry."""
    payloads: list[Any] = []
    sizes = st.integers(0, 6000)

    def text(kind: str) -> str:
        # The marker is patched in once ids are known (see below).
        return "\0" + kind + " " + "w" * draw(sizes)

    calls_made = 0
    for _ in range(draw(st.integers(1, 10))):
        extra = draw(
            st.sampled_from(["none", "none", "none", "model", "branch", "custom", "compaction"])
        )
        if extra == "model":
            payloads.append(ModelChange(model=MODEL))
        elif extra == "branch":
            payloads.append(BranchSummary(from_id=None, summary="\0branch " + "b" * draw(sizes)))
        elif extra == "custom":
            payloads.append(Message(role="custom", content=(TextContent("a note"),)))
        elif extra == "compaction" and payloads:
            payloads.append(("compaction", draw(st.integers(0, len(payloads) - 1))))
        images = (image(draw(st.integers(0, 5))),) if draw(st.integers(0, 4)) == 0 else ()
        payloads.append(user(text("user"), *images))
        for _step in range(draw(st.integers(0, 4))):
            n = draw(st.integers(1, 3))
            calls = [call(f"c{calls_made + i}") for i in range(n)]
            calls_made += n
            payloads.append(assistant(text("assistant"), *calls))
            pending = list(calls)
            while pending:
                take = draw(st.integers(1, len(pending)))
                group, pending = pending[:take], pending[take:]
                payloads.append(
                    Message(
                        role="tool_result",
                        content=tuple(
                            ToolResultContent(c.id, (TextContent(text("result")),)) for c in group
                        ),
                    )
                )
        if draw(st.booleans()) or not payloads or not isinstance(payloads[-1], Message):
            payloads.append(assistant(text("answer")))
    path: list[Entry] = []
    for payload in payloads:
        index = len(path)
        entry_id = f"e{index:04d}"
        if isinstance(payload, tuple):  # a compaction keeping from an earlier entry
            kept = path[payload[1]].id
            payload = Compaction(
                summary=f"<{entry_id}> summary", first_kept_id=kept, tokens_before=1
            )
        else:
            payload = _stamp(payload, entry_id)
        path = extend(path, payload)
    return path


def _stamp(payload: Any, entry_id: str) -> Any:
    if isinstance(payload, BranchSummary):
        return BranchSummary(payload.from_id, payload.summary.replace("\0", f"<{entry_id}> "))
    if not isinstance(payload, Message):
        return payload
    blocks = []
    for block in payload.content:
        if isinstance(block, TextContent):
            block = TextContent(block.text.replace("\0", f"<{entry_id}> "))
        elif isinstance(block, ToolResultContent):
            inner = tuple(
                TextContent(c.text.replace("\0", f"<{entry_id}> "))
                if isinstance(c, TextContent)
                else c
                for c in block.content
            )
            block = ToolResultContent(block.tool_call_id, inner, block.is_error)
        blocks.append(block)
    return payload.with_(content=tuple(blocks))
