"""The data of a comparison: alternatives of a message, two marked branches, column stats."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.branching.comparison import (
    ComparisonError,
    column_stats,
    of_alternatives,
    of_branches,
    timing,
)
from core.branching.tree import SessionTree
from core.sessions.messages import Message
from tests.branching.builders import entry
from tests.compare.builders import fanned_out, reply


def test_alternatives_become_columns_with_their_stats() -> None:
    comparison = of_alternatives(fanned_out(), "e000004", current_leaf="e000004")
    assert [c.entry_id for c in comparison.columns] == ["e000002", "e000004", "e000006"]
    assert comparison.anchor_id == "e000001"
    a, b, c = (col.stats for col in comparison.columns)
    assert (a.model, a.thinking, a.tokens, a.seconds, a.ttft) == ("openai/a", "off", 10, 1.5, 0.25)
    assert (b.model, b.thinking, b.tokens) == ("anthropic/b", "high", 20)
    assert c.seconds is None and c.ttft is None
    assert b.header() == "anthropic/b (high) · 20 tok · $0.0010 · 2.0s"
    assert c.header() == "openai/c · 10 tok · $0.0010"
    assert comparison.columns[1].text == "The answer is 4."
    assert comparison.columns[1].leaf_id == "e000004"


def test_at_most_four_columns_keeping_the_current_one() -> None:
    entries = [entry(0, None, "q", "user")]
    entries += [reply(i, "e000000", f"answer {i}", "m") for i in range(1, 7)]
    tree = SessionTree.from_entries(entries, leaf_id="e000001")
    comparison = of_alternatives(tree, "e000003", current_leaf="e000001")
    assert [c.entry_id for c in comparison.columns] == ["e000001", "e000004", "e000005", "e000006"]


def test_a_message_without_alternatives_cannot_be_compared() -> None:
    tree = SessionTree.from_entries([entry(0, None, "q", "user"), entry(1, "e000000", "a")])
    with pytest.raises(ComparisonError):
        of_alternatives(tree, "e000001")


def test_two_marked_entries_compare_their_whole_branches() -> None:
    entries = [
        entry(0, None, "start", "user"),
        entry(1, "e000000", "hello"),
        entry(2, "e000001", "left question", "user"),
        reply(3, "e000002", "left answer", "m", seconds=1.0),
        entry(4, "e000003", "left more", "user"),
        reply(5, "e000004", "left end", "m", seconds=2.0),
        entry(6, "e000001", "right question", "user"),
        reply(7, "e000006", "right answer", "n"),
    ]
    tree = SessionTree.from_entries(entries, leaf_id="e000007")
    comparison = of_branches(tree, "e000003", "e000007")
    left, right = comparison.columns
    assert comparison.anchor_id == "e000001"
    assert [e.id for e in left.entries] == ["e000002", "e000003", "e000004", "e000005"]
    assert left.leaf_id == "e000005" and left.stats.seconds == 3.0 and left.stats.tokens == 20
    assert [e.id for e in right.entries] == ["e000006", "e000007"]
    assert left.text.split("\n") == [
        "── user ──",
        "left question",
        "",
        "── assistant ──",
        "left answer",
        "",
        "── user ──",
        "left more",
        "",
        "── assistant ──",
        "left end",
    ]
    with pytest.raises(ComparisonError):
        of_branches(tree, "e000001", "e000005")  # one on the other's path
    with pytest.raises(ComparisonError):
        of_branches(tree, "e000005", "e000005")


def test_a_failed_reply_shows_its_error_and_bad_timing_is_ignored() -> None:
    tree = fanned_out()
    failed = replace(
        tree.entry("e000006"),
        payload=replace(tree.entry("e000006").payload, error="boom", meta={"timing": "x"}),
    )
    stats = column_stats([failed])
    assert stats.error == "boom" and stats.seconds is None
    for stop_reason, ended in (("error", "failed"), ("aborted", "stopped"), ("stop", None)):
        stopped = replace(failed, payload=replace(failed.payload, stop_reason=stop_reason))
        stats = column_stats([stopped])
        assert stats.ended == ended
        assert stats.figures == "10 tok · $0.0010" + (f" · {ended}" if ended else "")
    assert timing(Message(role="assistant", meta={"timing": {"ttft": "soon"}})) == (None, None)
