"""The one sanitiser for text that reaches a terminal: nothing a terminal
obeys gets through, everything readable does."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st

from core.sanitize import (
    BIDI_CONTROLS,
    StreamCleaner,
    bidi_marker,
    json_for_terminal,
    strip_control,
)

C0 = [chr(c) for c in range(0x20)]
C1 = [chr(c) for c in range(0x80, 0xA0)]
DANGEROUS = C0 + ["\x7f"] + C1 + list(BIDI_CONTROLS) + ["\ud800", "\udfff"]
PIECES = ["\x1b[", "\x1b]", "\x1bP", "\x1b\\", "\r\n", "[31m", "0;title", "\x07", "ls -la"]

hostile_text = st.lists(st.sampled_from(DANGEROUS + PIECES) | st.characters(), max_size=60).map(
    "".join
)


def allowed(char: str) -> bool:
    code = ord(char)
    if char in "\n\t":
        return True
    if code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF:
        return False
    return char not in BIDI_CONTROLS


@given(hostile_text)
def test_nothing_a_terminal_obeys_survives(text: str) -> None:
    cleaned = strip_control(text)
    assert all(allowed(char) for char in cleaned), repr(cleaned)
    assert strip_control(cleaned) == cleaned


@given(st.text(st.characters(codec="utf-8").filter(allowed)))
def test_readable_text_is_kept_exactly(text: str) -> None:
    assert strip_control(text) == text


@given(st.sampled_from(DANGEROUS), st.text(st.characters(codec="utf-8").filter(allowed)))
def test_text_after_a_control_character_is_never_hidden(control: str, after: str) -> None:
    """A control that is not an escape introducer hides nothing; an escape
    sequence (even unterminated) hides nothing past its line."""
    if control not in "\x1b\x9b\x90\x98\x9d\x9e\x9f":
        assert strip_control("before" + control + after).endswith(after)
    assert strip_control("before" + control + "\n" + after).endswith(after)


def test_a_lone_carriage_return_cannot_hide_what_came_before() -> None:
    assert strip_control("rm -rf ~\rls -la") == "rm -rf ~\nls -la"
    assert strip_control("one\r\ntwo\r") == "one\ntwo\n"


def test_bidi_controls_are_shown_as_markers() -> None:
    assert strip_control("access\u202e\u2066level") == "access⟨U+202E⟩⟨U+2066⟩level"
    assert bidi_marker("\u2069") == "⟨U+2069⟩"


def test_escape_sequences_are_removed_whole() -> None:
    text = (
        "a\x1b[31mb\x1b]8;;https://x.example\x07c\x1b]8;;\x1b\\d\x9d0;t\x9ce\x1bP+q\x1b\\f\x9b2Jg"
    )
    assert strip_control(text) == "abcdefg"
    assert strip_control("\x1b]0;never ended\nnext line") == "\nnext line"


@given(hostile_text, st.lists(st.integers(0, 60), max_size=6))
@example("\x1b]\x1b[\u202a", [])  # an unterminated OSC swallows the CSI after it
def test_a_stream_cleaned_in_pieces_shows_what_the_whole_text_would(
    text: str, cuts: list[int]
) -> None:
    cleaner = StreamCleaner()
    bounds = [0, *sorted(min(c, len(text)) for c in cuts), len(text)]
    shown = "".join(cleaner.feed(text[a:b]) for a, b in zip(bounds, bounds[1:], strict=False))
    shown += cleaner.flush()
    assert shown == strip_control(text)


@given(st.text(st.sampled_from(DANGEROUS) | st.characters()))
def test_json_for_a_terminal_escapes_controls_and_parses_back_exactly(text: str) -> None:
    written = json_for_terminal({"title": text, "é": [text]})
    assert all(allowed(char) for char in written), repr(written)
    assert json.loads(written) == {"title": text, "é": [text]}
