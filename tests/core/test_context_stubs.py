"""The safety net's last resort (issue 33 item 1, "never left out whole"):
when shortening every message is not enough (many small messages, an image,
a tiny window), the oldest turns go as marked stubs (the start and end of
each text, an image as a one-line note), never left out whole; the user's
question always goes whole; each stubbed entry says so on its row."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.sessions.content import TextContent
from core.sessions.context import build_context, estimate_tokens
from core.sessions.messages import Message
from tests.core.test_context import MODEL, assert_tool_pairing, assistant, chain, image, user
from tests.strategies import conversation_paths

QUESTION = "and what did I show you in the picture?"


def words(tag: str, n: int) -> str:
    return " ".join(f"{tag}w{i}" for i in range(n))


def small_exchanges_and_an_image():
    exchanges = []
    for i in range(12):
        exchanges.append(user(f"q{i}start " + words(f"q{i}", 60) + f" q{i}end"))
        exchanges.append(assistant(TextContent(f"a{i}start " + words(f"a{i}", 60) + f" a{i}end")))
    shown = Message(role="user", content=(TextContent("look at this"), image(7)))
    return chain(shown, assistant(TextContent("a cat")), *exchanges, user(QUESTION))


def test_old_turns_go_as_marked_stubs_when_shortening_cannot_fit() -> None:
    path = small_exchanges_and_an_image()
    budget = 1_400
    context = build_context(path, MODEL, token_budget=budget)
    sent = "\n".join(m.text for m in context.messages)
    assert sum(estimate_tokens(m) for m in context.messages) <= budget
    # The question goes whole, last.
    assert context.messages[-1].text.endswith(QUESTION)
    # Every earlier message is there: its start and end, in order.
    order = ["look at this", "a cat"] + [
        f"{who}{i}{end}" for i in range(12) for who in "qa" for end in ("start", "end")
    ]
    positions = [sent.find(mark) for mark in order]
    assert -1 not in positions, [m for m, p in zip(order, positions, strict=True) if p < 0]
    assert positions == sorted(positions)
    # The image is a note in the request, not pixels and not nothing.
    assert "[image left out to fit the context window: image/png 70x20]" in sent
    assert not context.image_shas
    # Each stub says what was left out of it.
    assert re.search(r"\[… [\d,]+ words of this message left out to fit", sent)
    assert re.search(r"\[… [\d,]+ words of this reply left out to fit", sent)
    assert context.stubbed_messages >= 2
    assert any("sent as stubs" in note for note in context.notes)
    # The rows say it lastingly: the image's message and the first exchange.
    for entry_id in ("e0", "e2", "e3"):
        assert context.left_out[entry_id].startswith("sent as a stub"), context.left_out
    assert "the images and files of this message as notes" in context.left_out["e0"]
    assert re.search(r"start and end of this reply \([\d,]+ words left out", context.left_out["e3"])


def test_a_budget_too_small_for_stubs_marks_what_was_left_out_in_the_request() -> None:
    path = small_exchanges_and_an_image()
    context = build_context(path, MODEL, token_budget=200)
    assert context.messages[-1].text.endswith(QUESTION)
    first = context.messages[0].text
    assert re.match(r"\[\d+ earlier messages? left out to fit the context window", first)
    assert all(note for note in context.left_out.values())
    assert context.left_out["e0"].startswith("left out of the request")


@settings(max_examples=200)
@given(conversation_paths(), st.integers(50, 3000))
def test_every_earlier_message_is_sent_or_marked(path, budget) -> None:
    whole = build_context(path, MODEL)
    context = build_context(path, MODEL, token_budget=budget)
    assert_tool_pairing(context.messages)
    if len(context.messages) < len(whole.messages):
        sent = "\n".join(m.text for m in context.messages)
        assert re.search(r"earlier messages? left out to fit the context window", sent)
    if context.stubbed_messages:
        assert context.notes


def test_the_question_goes_whole_while_older_messages_can_give_way() -> None:
    question = "q " + words("ask", 300)
    path = [*small_exchanges_and_an_image()[:-1]]
    path = chain(*(e.payload for e in path), user(question))
    context = build_context(path, MODEL, token_budget=1_000)
    assert context.messages[-1].text.endswith(question)
    assert context.stubbed_messages
    # Only a question too big for the budget by itself is shortened: marked.
    context = build_context(path, MODEL, token_budget=300)
    assert re.search(r"\[… [\d,]+ words of this message left out to fit", context.messages[-1].text)
    assert context.messages[-1].text.endswith("askw299")


def test_a_kept_tail_inside_one_turn_is_never_stubbed() -> None:
    """A compaction that split a long turn keeps its tail from an assistant
    message: no user message after the summary, all of it is the newest turn."""
    from core.sessions.content import ToolCallContent, ToolResultContent
    from core.sessions.entries import Compaction

    def step(n: int):
        call = ToolCallContent(f"c{n}", "read_file", {}, "{}")
        found = ToolResultContent(f"c{n}", (TextContent(f"r{n}start " + words(f"r{n}", 200)),))
        return (
            assistant(TextContent(f"step {n}"), call, stop="tool_use"),
            Message(role="tool_result", content=(found,)),
        )

    path = chain(Compaction("S", first_kept_id="e1"), *step(0), *step(1), *step(2))
    context = build_context(path, MODEL, token_budget=300)
    assert context.stubbed_messages == 0
    assert_tool_pairing(context.messages)
    assert "step 0" in "\n".join(m.text for m in context.messages)
