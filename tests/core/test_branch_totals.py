"""The footer's figures for the current path, worked out from what is new
(core.branching.branch_totals), against adding up every path from its root."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from core.branching.branch_totals import BranchTotals
from core.branching.tree import SessionTree
from core.sessions.content import TextContent, ThinkingContent
from core.sessions.entries import Entry, entry_type_of
from core.sessions.messages import Message
from core.tokens import context_tokens
from core.usage import total_usage
from tests.strategies import messages, payloads

MODELS = ("anthropic/claude-x", "openai/gpt-x")
REPLIES = messages.map(lambda message: replace(message, role="assistant"))


@st.composite
def trees(draw) -> tuple[SessionTree, list[str]]:
    """Entries of every kind (replies with and without usage, compactions...) in a random tree."""
    raw = draw(st.lists(st.integers(-2, 10**6), min_size=1, max_size=30))
    entries = []
    for i, value in enumerate(raw):
        payload = draw(REPLIES | payloads)
        entries.append(
            Entry(
                id=f"e{i:04d}",
                parent_id=None if i == 0 or value < 0 else f"e{value % i:04d}",
                session_id="s",
                type=entry_type_of(payload),
                created_at=f"2026-01-01T00:00:{i:02d}.000Z",
                payload=payload,
            )
        )
    return SessionTree.from_entries(entries), [entry.id for entry in entries]


@given(trees(), st.data())
@settings(max_examples=100, deadline=None)
def test_each_path_adds_up_as_if_counted_from_its_root(case, data) -> None:
    tree, ids = case
    totals = BranchTotals()
    for _ in range(8):  # moves between branches, back and forth
        path = tree.path_entries(data.draw(st.sampled_from(ids)))
        assert totals.usage(path) == total_usage(path)
        for model in MODELS:
            assert totals.context_tokens(path, model) == context_tokens(path, model, exact=False)
    assert totals.usage([]) == total_usage([])


def test_the_context_is_remembered_per_model() -> None:
    """A reply's thinking is sent back to its own model only: the size depends on the model."""
    question = Message(role="user", content=(TextContent("why?"),))
    reply = Message(
        role="assistant",
        content=(ThinkingContent("pondering " * 200), TextContent("because")),
        model=MODELS[0],
    )
    path = [Entry.new("s", None, question)]
    path.append(Entry.new("s", path[0].id, reply))
    totals = BranchTotals()
    sizes = [totals.context_tokens(path, model) for model in (*MODELS, *MODELS)]
    assert sizes[:2] == [context_tokens(path, model, exact=False) for model in MODELS]
    assert sizes[0] > sizes[1] and sizes[2:] == sizes[:2]
