"""The cut point: where the kept tail begins. Pure functions, property-tested."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.compaction.plan import (
    SPLIT_TOLERANCE,
    CutPoint,
    cut_candidates,
    entry_tokens,
    find_cut_point,
    last_turn_cut,
    prepare,
    prepare_compaction,
    visible_start,
)
from core.sessions.context import SUMMARY_PREFIX, build_context
from core.sessions.entries import Compaction
from tests.compaction.builders import (
    MODEL,
    assistant,
    call,
    chain,
    extend,
    long_paths,
    marker,
    result,
    user,
)
from tests.context_texts import context_texts
from tests.core.test_context import assert_tool_pairing
from tests.strategies import conversation_paths

keeps = st.integers(0, 30_000)


def role(entry) -> str | None:
    return entry.message.role if entry.message is not None else None


def kept_tokens(path, index: int) -> int:
    return sum(entry_tokens(e) for e in path[index:])


def call_sites(path, start: int) -> list[tuple[int, int]]:
    """(index of the assistant message with the call, index of its result) pairs."""
    calls: dict[str, int] = {}
    pairs = []
    for index in range(start, len(path)):
        message = path[index].message
        if message is None:
            continue
        for c in message.tool_calls:
            calls[c.id] = index
        for r in message.tool_results:
            if r.tool_call_id in calls:
                pairs.append((calls[r.tool_call_id], index))
    return pairs


@settings(max_examples=200, deadline=None)
@given(long_paths(), keeps)
def test_cut_lands_on_a_user_or_assistant_message_in_view(path, keep) -> None:
    cut = find_cut_point(path, keep)
    assert cut is not None, "every generated path has a user message after its latest compaction"
    assert role(path[cut.first_kept_index]) in ("user", "assistant")
    assert path[cut.first_kept_index].id == cut.first_kept_id
    assert cut.first_kept_index >= visible_start(path)


@settings(max_examples=200, deadline=None)
@given(long_paths() | conversation_paths(), keeps)
def test_cut_never_separates_a_call_from_its_result(path, keep) -> None:
    cut = find_cut_point(path, keep)
    if cut is None:
        return
    for called, answered in call_sites(path, visible_start(path)):
        assert not (called < cut.first_kept_index <= answered), (called, cut, answered)
    assert role(path[cut.first_kept_index]) != "tool_result"


@settings(max_examples=200, deadline=None)
@given(long_paths(), keeps)
def test_kept_tail_is_about_keep_recent_tokens(path, keep) -> None:
    cut = find_cut_point(path, keep)
    start = visible_start(path)
    candidates = cut_candidates(path, start)
    kept = kept_tokens(path, cut.first_kept_index)
    # Nothing is summarized that need not be: one candidate earlier keeps at least `keep`.
    earlier = [c for c in candidates if c < cut.first_kept_index]
    if earlier:
        assert kept_tokens(path, earlier[-1]) >= keep
    # And no more is kept than about `keep`: at most one message over, plus a
    # short turn beginning kept rather than split; unless the last `keep`
    # tokens hold no place to cut at all (one huge call and result).
    reach = next(
        (i for i in range(len(path) - 1, start - 1, -1) if kept_tokens(path, i) >= keep), None
    )
    if reach is not None and any(c >= reach for c in candidates):
        largest = max(entry_tokens(e) for e in path[start:])
        assert kept <= keep * (1 + SPLIT_TOLERANCE) + largest


@settings(max_examples=200, deadline=None)
@given(long_paths(), keeps)
def test_split_turn_points_at_the_user_message_that_began_it(path, keep) -> None:
    cut = find_cut_point(path, keep)
    if not cut.split_turn:
        return
    start = cut.turn_start_index
    assert role(path[start]) == "user"
    assert role(path[cut.first_kept_index]) == "assistant"
    assert all(role(e) != "user" for e in path[start + 1 : cut.first_kept_index])
    # the turn's beginning was too long to keep whole
    assert sum(entry_tokens(e) for e in path[start : cut.first_kept_index]) > keep * SPLIT_TOLERANCE


def compacted(path, cut: CutPoint, summary: str = "SUMMARY"):
    return extend(
        path, Compaction(summary=summary, first_kept_id=cut.first_kept_id, tokens_before=1)
    )


@settings(max_examples=200, deadline=None)
@given(long_paths(), keeps)
def test_after_compaction_the_context_is_the_summary_then_the_kept_tail(path, keep) -> None:
    cut = find_cut_point(path, keep)
    preparation = prepare(path, cut)
    after = compacted(path, cut)
    context = build_context(after, MODEL)
    assert_tool_pairing(context.messages)
    texts = context_texts(context.messages)
    assert texts[0] == SUMMARY_PREFIX + "SUMMARY"
    sent = "\n".join(texts[1:])
    summarized = {marker(e) for e in path[: cut.first_kept_index]}
    kept = {
        marker(e)
        for e in path[cut.first_kept_index :]
        if e.message is not None and e.message.role != "custom"
    }
    for mark in summarized:
        assert mark not in sent, f"{mark} was summarized but is still sent"
    first = path[cut.first_kept_index]
    if first.message.role == "user" or first.message.text:
        assert texts[1].startswith(marker(first)) or marker(first) in texts[1]
    if preparation is not None:
        in_transcript = {marker(e) for e in preparation.history + preparation.turn_prefix}
        assert not in_transcript & kept


@settings(max_examples=200, deadline=None)
@given(long_paths(), keeps, keeps)
def test_a_second_compaction_summarizes_only_what_the_first_kept(path, keep1, keep2) -> None:
    first = find_cut_point(path, keep1)
    once = compacted(path, first, "FIRST")
    once = extend(
        once, user("<more> next question " + "q" * 4000), assistant("<more2> answer " + "a" * 4000)
    )
    second = find_cut_point(once, keep2)
    assert second.first_kept_index >= first.first_kept_index
    preparation = prepare(once, second)
    if preparation is None:
        return
    assert preparation.previous_summary == "FIRST"
    ids = {e.id for e in preparation.history + preparation.turn_prefix}
    assert all(e.id not in ids for e in path[: first.first_kept_index]), "already summarized"
    twice = compacted(once, second, "SECOND")
    context = build_context(twice, MODEL)
    assert_tool_pairing(context.messages)
    assert context_texts(context.messages)[0] == SUMMARY_PREFIX + "SECOND"
    assert not any("FIRST" in m.text for m in context.messages)


# --- examples ------------------------------------------------------------------


def test_plain_chat_cuts_at_a_user_message_and_keeps_short_turns_whole() -> None:
    path = chain(
        *(
            m
            for i in range(8)
            for m in (user(f"u{i} " + "x" * 396), assistant(f"a{i} " + "y" * 396))
        )
    )
    # Each message is ~104 tokens: the last nine reach 900, at the answer a3;
    # its question is short next to 900, so the turn is kept whole.
    cut = find_cut_point(path, 900)
    assert not cut.split_turn
    assert path[cut.first_kept_index].payload.text.startswith("u3")
    # With a tail of 300, one question is a third of it: that turn is split.
    cut = find_cut_point(path, 300)
    assert cut.split_turn
    assert path[cut.first_kept_index].payload.text.startswith("a6")
    assert path[cut.turn_start_index].payload.text.startswith("u6")


def test_a_long_tool_turn_is_split_and_its_beginning_summarized_apart() -> None:
    path = chain(
        user("u0 earlier"),
        assistant("a0 earlier answer"),
        user("u1 fix the parser"),
        assistant("step 1", call("c1")),
        result("c1", "r" * 8000),
        assistant("step 2", call("c2")),
        result("c2", "s" * 8000),
        assistant("step 3", call("c3")),
        result("c3", "t" * 400),
        assistant("done: the parser is fixed"),
    )
    cut = find_cut_point(path, 500)
    assert cut.split_turn
    assert path[cut.turn_start_index].payload.text == "u1 fix the parser"
    assert path[cut.first_kept_index].payload.text == "step 3"
    preparation = prepare(path, cut)
    assert [e.payload.text for e in preparation.history] == ["u0 earlier", "a0 earlier answer"]
    assert preparation.turn_prefix[0].payload.text == "u1 fix the parser"
    assert len(preparation.turn_prefix) == 5


def test_the_tail_never_starts_at_a_tool_result_even_when_it_is_huge() -> None:
    path = chain(
        user("u0"),
        assistant("a0"),
        user("u1"),
        assistant("look", call("c1")),
        result("c1", "z" * 200_000),
    )
    cut = find_cut_point(path, 1000)
    # Not at the result: at the call, then back to its short question (the turn is kept whole).
    assert path[cut.first_kept_index].payload.text == "u1"
    path = chain(
        user("u0"),
        assistant("a0"),
        user("u1 " + "q" * 4000),
        assistant("look", call("c1")),
        result("c1", "z" * 200_000),
    )
    cut = find_cut_point(path, 1000)
    assert path[cut.first_kept_index].payload.text == "look" and cut.split_turn


def test_a_result_far_from_its_call_still_is_not_separated() -> None:
    # A result that arrives after later messages (an odd path): no cut in between.
    path = chain(
        user("u0"),
        assistant("calling", call("c1")),
        user("u1 meanwhile"),
        assistant("a1"),
        result("c1", "late result"),
        user("u2 " + "x" * 4000),
        assistant("a2 " + "y" * 4000),
    )
    cut = find_cut_point(path, 1500)
    assert not (1 < cut.first_kept_index <= 4)


def test_nothing_to_summarize_when_everything_fits_except_for_manual_compaction() -> None:
    path = chain(user("u0"), assistant("a0"), user("u1"), assistant("a1"))
    assert prepare_compaction(path, 20_000) is None
    manual = prepare_compaction(path, 20_000, manual=True)
    assert manual is not None and manual.first_kept_id == path[2].id
    assert [e.id for e in manual.history] == [path[0].id, path[1].id]
    one_turn = chain(user("u0"), assistant("a0"))
    assert prepare_compaction(one_turn, 20_000, manual=True) is None
    assert last_turn_cut(one_turn) == CutPoint(0, path[0].id)
