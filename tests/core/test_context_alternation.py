"""Strict alternation (issue 33 item 7): strict chat templates (Mistral, Gemma
on llama.cpp) refuse two user turns in a row. "Branch here" on a user message
then sending, a compaction's summary before the next question, a branch
summary, a reply that failed with nothing in it: the context builder merges
consecutive user-role items into one message (keeping every part), and every
provider wire alternates, tool results attached to their calls."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.providers import anthropic_format, openai_format
from core.sessions.content import ImageContent, TextContent
from core.sessions.context import BRANCH_PREFIX, SUMMARY_PREFIX, build_context
from core.sessions.entries import BranchSummary, Compaction
from core.sessions.speakers import Speaker
from tests.core.test_context import MODEL, assistant, chain, user
from tests.strategies import conversation_paths

AGENTS = ("Critic", "Poet")


def assert_openai_alternates(wire: list[dict[str, Any]]) -> None:
    expected: list[str] = []  # tool call ids still to be answered, in order
    for index, message in enumerate(wire):
        role = message["role"]
        if expected:
            assert role == "tool" and message["tool_call_id"] == expected.pop(0), wire
            continue
        assert role != "tool", f"a tool message without its call at {index}"
        if index:
            previous = wire[index - 1]["role"]
            assert not (previous == role == "user"), f"two user messages at {index}"
            assert not (previous == role == "assistant"), f"two assistant messages at {index}"
        if role == "assistant":
            expected = [call["id"] for call in message.get("tool_calls") or []]
    assert not expected, "a call without its result"


def assert_anthropic_alternates(wire: list[dict[str, Any]]) -> None:
    roles = [m["role"] for m in wire]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles
    for index, message in enumerate(wire):
        calls = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for b in message["content"] if b.get("type") == "tool_result"]
        if calls:
            answer = wire[index + 1]["content"]
            assert [b.get("tool_use_id") for b in answer[: len(calls)]] == calls
        if results:
            assert message["role"] == "user"
            assert all(b.get("type") == "tool_result" for b in message["content"][: len(results)])


@settings(max_examples=400)
@given(conversation_paths(), st.sampled_from([None, 60, 400, 3_000]))
def test_every_wire_alternates(path, budget) -> None:
    context = build_context(path, MODEL, token_budget=budget)
    roles = [m.role for m in context.messages]
    for before, after in zip(roles, roles[1:], strict=False):
        assert not (before == after == "user") and not (before == after == "assistant"), roles
    if not context.messages:
        return
    assert_openai_alternates(openai_format.convert(context.messages, {}))
    assert_anthropic_alternates(anthropic_format.to_messages(context.messages, {}))


@settings(max_examples=400)
@given(
    conversation_paths(agents=AGENTS),
    st.sampled_from((None, *AGENTS)),
    st.sampled_from([None, "Ana"]),
    st.sampled_from([None, 60, 400, 3_000]),
)
def test_every_round_table_wire_alternates(path, agent, user_name, budget) -> None:
    """Issue 35: whoever is asked, the others' replies come as named user items
    and no request holds two user (or assistant) turns in a row; the asked
    agent hears only its own replies as assistant and gets only its system prompt."""
    speaker = Speaker(agent, user_name, f"you are {agent}" if agent else None)
    context = build_context(path, MODEL, token_budget=budget, speaker=speaker)
    roles = [m.role for m in context.messages]
    for before, after in zip(roles, roles[1:], strict=False):
        assert not (before == after == "user") and not (before == after == "assistant"), roles
    assert all(m.agent == agent for m in context.messages if m.role == "assistant")
    if agent is not None:
        assert context.system == f"you are {agent}"
    if not context.messages:
        return
    assert_openai_alternates(openai_format.convert(context.messages, {}))
    assert_anthropic_alternates(anthropic_format.to_messages(context.messages, {}))


def test_branch_here_on_a_user_message_sends_one_user_turn_with_every_part() -> None:
    picture = ImageContent("image/png", "ab" * 32, 40, 20)
    path = chain(
        user("first question"),
        assistant(TextContent("an answer")),
        user("a question left unanswered"),
        chain(user("x"))[0].payload.with_(content=(TextContent("look"), picture)),
    )
    context = build_context(path, MODEL)
    assert [m.role for m in context.messages] == ["user", "assistant", "user"]
    last = context.messages[-1]
    assert last.content == (TextContent("a question left unanswered"), TextContent("look"), picture)


def test_the_summary_joins_the_question_after_it() -> None:
    path = chain(
        user("one"),
        assistant(TextContent("r1")),
        Compaction("SUMMARY", first_kept_id=None, tokens_before=500),
        BranchSummary(from_id="x", summary="tried Rust"),
        user("three"),
    )
    [message] = build_context(path, MODEL).messages
    texts = [b.text for b in message.content if isinstance(b, TextContent)]
    assert texts[0].startswith(SUMMARY_PREFIX + "SUMMARY")
    assert texts[1].startswith(BRANCH_PREFIX + "tried Rust")
    assert texts[2] == "three"
