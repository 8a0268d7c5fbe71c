"""The safety net (issue 33 item 1): a message too big for what is left of the
window is sent shortened, its start and end kept around a marker that says how
much was left out, never left out whole; the user's question always goes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.sessions.context import build_context, estimate_tokens
from core.sessions.messages import Message
from tests.core.test_context import MODEL, assistant, chain, user
from tests.strategies import conversation_paths

BIG = " ".join(f"bigword{i}" for i in range(1500))
MARKER = re.compile(
    r"\[… ([\d,]+) (?:words|characters) of this (reply|message|tool result) left out to fit"
)
WORDS_SAID = re.compile(r"sent shortened: [\d,]+ words|\([\d,]+ words left out\)")


def big_exchange_path():
    from core.sessions.content import TextContent

    return chain(
        user("hello"),
        assistant(TextContent("hi there")),
        user("BIG-ONE tell me everything"),
        assistant(TextContent(BIG)),
        user("what was the 100th word of the big answer?"),
    )


def test_a_big_reply_is_shortened_in_the_middle_not_left_out() -> None:
    context = build_context(big_exchange_path(), MODEL, token_budget=1_500)
    texts = [m.text for m in context.messages]
    assert texts[0] == "hello" and texts[2] == "BIG-ONE tell me everything"
    assert texts[-1] == "what was the 100th word of the big answer?"
    reply = texts[3]
    assert reply.startswith("bigword0 bigword1 ") and reply.endswith("bigword1499")
    [match] = MARKER.findall(reply)
    left_out = int(match[0].replace(",", ""))
    assert match[1] == "reply"
    assert left_out == 1500 - len(re.findall(r"bigword\d+", reply))
    assert sum(estimate_tokens(m) for m in context.messages) <= 1_500
    assert context.stubbed_messages == 0
    assert context.shortened_messages == 1
    assert any("shortened" in note and "bigword0" in note for note in context.notes)
    # Said on the entry too, for the chat view's row.
    assert list(context.left_out) == ["e3"]
    assert context.left_out["e3"].startswith(f"sent shortened: {left_out:,} words")


def test_the_question_goes_whole_while_older_messages_can_be_shortened() -> None:
    from core.sessions.content import TextContent

    question = "q " + " ".join(f"ask{i}" for i in range(300))
    path = chain(user("a " + BIG), assistant(TextContent("b " + BIG)), user(question))
    context = build_context(path, MODEL, token_budget=1_000)
    assert context.messages[-1].text == question
    assert all(MARKER.search(m.text) for m in context.messages[:2])


@settings(max_examples=200)
@given(conversation_paths(), st.integers(50, 3000))
def test_what_is_shortened_is_said(path, budget) -> None:
    """Every marker in the request is said on a row: a shortened message, or a
    stub that kept only a text's start and end (consecutive messages of one
    role are sent as one, so markers are counted, not messages)."""
    context = build_context(path, MODEL, token_budget=budget)
    markers = sum(len(MARKER.findall(_all_text(m))) for m in context.messages)
    said = [note for note in context.left_out.values() if WORDS_SAID.search(note)]
    assert context.shortened_messages <= markers
    assert (markers > 0) == bool(said)
    assert len(said) <= markers
    assert set(context.left_out) <= {entry.id for entry in path}
    if context.shortened_messages or context.stubbed_messages:
        assert context.notes


def test_a_shortened_branch_summary_is_said_on_its_row() -> None:
    """The summary of another branch is no entry's message: the row that shows
    it still says when it is sent shortened."""
    from core.sessions.content import TextContent
    from core.sessions.entries import BranchSummary

    words = " ".join(f"summaryword{i}" for i in range(800))
    path = chain(
        BranchSummary(from_id=None, summary=words),
        user("hello"),
        assistant(TextContent("hi")),
        user("and now?"),
    )
    context = build_context(path, MODEL, token_budget=300)
    assert MARKER.search(context.messages[0].text)
    assert WORDS_SAID.search(context.left_out["e0"])


def _all_text(message: Message) -> str:
    from core.sessions.content import TextContent, ToolResultContent

    parts = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ToolResultContent):
            parts += [c.text for c in block.content if isinstance(c, TextContent)]
    return "\n".join(parts)
