"""Hypothesis strategies for the core model: blocks, messages, entries, paths."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from hypothesis import strategies as st

from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import (
    THINKING_LEVELS,
    BranchSummary,
    Compaction,
    Entry,
    ModelChange,
    Note,
)
from core.sessions.messages import STOP_REASONS, Message, Usage

text = st.text(max_size=40)
ids = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-:.", min_size=1, max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


def _sha(seed: int) -> str:
    return hashlib.sha256(str(seed).encode()).hexdigest()


images = st.builds(
    ImageContent,
    media_type=st.sampled_from(["image/png", "image/jpeg", "image/webp"]),
    sha256=st.integers(0, 6).map(_sha),
    width=st.integers(1, 4000),
    height=st.integers(1, 4000),
)
texts = st.builds(TextContent, text=text)
thinking = st.builds(ThinkingContent, text=text, signature=st.none() | text, redacted=st.booleans())
tool_calls = st.builds(
    ToolCallContent,
    id=ids,
    name=st.sampled_from(["read_file", "run_command", "search_text"]),
    arguments=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    raw_arguments=text,
)
tool_results = st.builds(
    ToolResultContent,
    tool_call_id=ids,
    content=st.lists(texts | images, max_size=3).map(tuple),
    is_error=st.booleans(),
)
usages = st.builds(
    Usage,
    input_tokens=st.integers(0, 10**6),
    output_tokens=st.integers(0, 10**6),
    cache_read_tokens=st.integers(0, 10**6),
    cache_write_tokens=st.integers(0, 10**6),
    reasoning_tokens=st.integers(0, 10**6),
    input_cost=st.floats(0, 10, allow_nan=False),
    output_cost=st.floats(0, 10, allow_nan=False),
    cache_read_cost=st.floats(0, 10, allow_nan=False),
    cache_write_cost=st.floats(0, 10, allow_nan=False),
)
messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool_result", "custom"]),
    content=st.lists(texts | images | thinking | tool_calls | tool_results, max_size=4).map(tuple),
    model=st.none() | st.sampled_from(["anthropic/claude-x", "openai/gpt-x"]),
    provider=st.none() | st.sampled_from(["anthropic", "litellm"]),
    usage=st.none() | usages,
    stop_reason=st.none() | st.sampled_from(STOP_REASONS),
    error=st.none() | text,
    custom_type=st.none() | text,
    meta=st.dictionaries(st.text(max_size=5), json_values, max_size=2),
)
payloads = (
    messages
    | st.builds(
        Compaction,
        summary=text,
        first_kept_id=st.none() | ids,
        tokens_before=st.integers(0, 10**6),
        details=st.dictionaries(st.text(max_size=5), json_values, max_size=2),
    )
    | st.builds(BranchSummary, from_id=st.none() | ids, summary=text)
    | st.builds(
        ModelChange,
        model=st.sampled_from(["anthropic/claude-x", "openai/gpt-x"]),
        thinking=st.sampled_from(THINKING_LEVELS),
    )
)
entries = st.builds(
    Entry,
    id=ids,
    parent_id=st.none() | ids,
    session_id=ids,
    type=st.just("message"),
    created_at=st.just("2026-01-01T00:00:00.000000Z"),
    payload=messages,
)


# --- conversation paths ----------------------------------------------------


@st.composite
def conversation_paths(draw, max_turns: int = 8, agents: Sequence[str] = ()) -> list[Entry]:
    """A realistic path: user turns, assistant turns with tool calls and their
    results (sometimes missing), aborted turns, model changes, branch summaries,
    two user messages in a row ("branch here" on a user message), compactions
    pointing at earlier entries and pinned notes (on or off). With ``agents``:
    replies by those round-table agents (or the session's model), up to three
    in a row."""
    models = ["anthropic/claude-x", "openai/gpt-x"]
    path: list[Entry] = []
    counter = 0

    def add(payload) -> None:
        nonlocal counter
        counter += 1
        parent = path[-1].id if path else None
        path.append(
            Entry(
                id=f"e{counter:04d}",
                parent_id=parent,
                session_id="s",
                type=Entry.new("s", None, payload).type,
                created_at=f"2026-01-01T00:00:{counter:02d}.000000Z",
                payload=payload,
            )
        )

    for turn in range(draw(st.integers(1, max_turns))):
        kind = draw(
            st.sampled_from(
                [
                    "plain",
                    "plain",
                    "tools",
                    "model",
                    "branch",
                    "compact",
                    "custom",
                    "branch_here",
                    "note",
                ]
            )
        )
        if kind == "model":
            add(
                ModelChange(
                    model=draw(st.sampled_from(models)),
                    thinking=draw(st.sampled_from(THINKING_LEVELS)),
                )
            )
        elif kind == "branch":
            add(BranchSummary(from_id=None, summary=draw(text)))
        elif kind == "custom":
            add(Message(role="custom", content=(TextContent("note"),)))
        elif kind == "note":
            add(
                Note(
                    text=draw(st.sampled_from(["", "stay brief", "[/INST] in English"])),
                    depth=draw(st.integers(0, 9)),
                )
            )
        elif kind == "branch_here":  # "branch here" on a user message, then a new one sent
            add(Message(role="user", content=(TextContent(draw(text)),)))
        elif kind == "compact" and path:
            kept = draw(st.sampled_from([e.id for e in path] + [None]))
            add(Compaction(summary=draw(text), first_kept_id=kept, tokens_before=100))
        add(
            Message(
                role="user", content=tuple(draw(st.lists(texts | images, min_size=1, max_size=2)))
            )
        )
        # A round table: several speakers answer in a row, the user silent.
        for reply in range(1 + (draw(st.integers(0, 2)) if agents else 0)):
            n_calls = draw(st.integers(0, 3)) if kind == "tools" else 0
            calls = tuple(
                ToolCallContent(
                    id=f"call {turn}.{reply}.{i}",
                    name="read_file",
                    arguments={},
                    raw_arguments="{}",
                )
                for i in range(n_calls)
            )
            stop = draw(st.sampled_from(["stop", "tool_use", "aborted", "error", "interrupted"]))
            think = tuple(draw(st.lists(thinking, max_size=1)))
            add(
                Message(
                    role="assistant",
                    content=think + (TextContent(draw(text)),) + calls,
                    model=draw(st.sampled_from(models)),
                    stop_reason=stop,
                    agent=draw(st.sampled_from((None, *agents))),
                )
            )
            answered = [c for c in calls if draw(st.booleans())]
            # Results may come in one message or several, in any order.
            while answered:
                chunk = answered[: draw(st.integers(1, len(answered)))]
                answered = answered[len(chunk) :]
                add(
                    Message(
                        role="tool_result",
                        content=tuple(
                            ToolResultContent(
                                c.id, tuple(draw(st.lists(texts | images, max_size=2))), False
                            )
                            for c in chunk
                        ),
                    )
                )
    return path
