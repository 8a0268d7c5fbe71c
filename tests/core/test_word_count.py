"""Words in a slice of a long text, counted from the whole text's count: the
same as splitting the slice, wherever the cuts fall (inside words, on spaces)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.sessions.word_count import WordCount

TEXTS = st.text(alphabet=st.sampled_from("ab \n\t\u3000\u2028é"), max_size=40)


@given(TEXTS, st.data())
def test_a_slice_has_the_words_split_finds_in_it(text: str, data: st.DataObject) -> None:
    count = WordCount(text)
    for _ in range(3):  # one count, several cuts, as a shortened message is tried
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
        assert count.between(start, end) == len(text[start:end].split())
