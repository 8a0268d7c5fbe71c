"""The word-level diff the compare screen highlights with."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.branching.word_diff import Span, tokens, word_diff


def changed_words(spans: list[Span]) -> list[str]:
    return [s.text for s in spans if s.changed]


def test_identical_texts_have_no_changes() -> None:
    a, b = word_diff(["The cat sat.", "The cat sat."])
    assert a == [Span("The cat sat.", False)] and b == a


def test_a_changed_word_is_marked_in_both_texts_and_spaces_stay_plain() -> None:
    a, b = word_diff(["The quick brown fox", "The slow brown fox"])
    assert changed_words(a) == ["quick"]
    assert changed_words(b) == ["slow"]
    assert "".join(s.text for s in b) == "The slow brown fox"


def test_neighbouring_changed_words_join_into_one_span() -> None:
    _, b = word_diff(["Paris is the capital.", "Lyon is not the capital."])
    assert changed_words(b) == ["Lyon", "not"]
    _, b = word_diff(["a b c", "x y c"])
    assert changed_words(b) == ["x y"]


def test_the_reference_marks_what_any_other_text_lacks() -> None:
    ref, one, two = word_diff(["red green blue", "red green pink", "gold green blue"])
    assert changed_words(ref) == ["red", "blue"]
    assert changed_words(one) == ["pink"]
    assert changed_words(two) == ["gold"]


def test_a_single_text_has_nothing_to_compare_with() -> None:
    assert word_diff(["alone here"]) == [[Span("alone here", False)]]
    assert word_diff([]) == []


words = st.lists(st.sampled_from(["a", "b", "cat", "dog", "é", "1", ",", ".", " ", "\n", "  "]))


@given(st.lists(words.map("".join), min_size=1, max_size=4))
def test_spans_cover_each_text_exactly(texts: list[str]) -> None:
    for text, spans in zip(texts, word_diff(texts), strict=True):
        assert "".join(s.text for s in spans) == text
        assert all(s.text for s in spans)
        # neighbouring spans differ in their mark (merged otherwise)
        assert all(x.changed != y.changed for x, y in zip(spans, spans[1:], strict=False))


@given(words.map("".join))
def test_tokens_join_back(text: str) -> None:
    assert "".join(tokens(text)) == text
