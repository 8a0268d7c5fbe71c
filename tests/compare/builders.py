"""Sessions for the compare tests, built in memory: replies with their usage
and timings, model changes, one question answered by three models."""

from __future__ import annotations

from core.branching.tree import SessionTree
from core.sessions.content import TextContent
from core.sessions.entries import Entry, ModelChange
from core.sessions.messages import Message, Usage
from tests.branching.builders import SESSION, entry, stamp


def reply(i: int, parent: str, text: str, model: str, *, seconds=None, tokens=10, cost=0.001):
    meta = {"timing": {"ttft": 0.25, "total": seconds}} if seconds is not None else {}
    message = Message(
        role="assistant",
        content=(TextContent(text),),
        model=model,
        usage=Usage(input_tokens=100, output_tokens=tokens, output_cost=cost),
        stop_reason="stop",
        meta=meta,
    )
    return Entry(f"e{i:06d}", parent, SESSION, "message", stamp(i), message)


def change(i: int, parent: str, model: str, thinking: str = "off") -> Entry:
    return Entry(
        f"e{i:06d}", parent, SESSION, "model_change", stamp(i), ModelChange(model, thinking)
    )


def fanned_out() -> SessionTree:
    """A question answered by three models (two behind a model change), the
    current position on the second."""
    entries = [
        change(0, None, "openai/a"),
        entry(1, "e000000", "What is 2+2?", "user"),
        reply(2, "e000001", "It is four.", "openai/a", seconds=1.5),
        change(3, "e000001", "anthropic/b", "high"),
        reply(4, "e000003", "The answer is 4.", "anthropic/b", seconds=2.0, tokens=20),
        change(5, "e000001", "openai/c"),
        reply(6, "e000005", "Four.", "openai/c"),
    ]
    return SessionTree.from_entries(entries, leaf_id="e000004")
