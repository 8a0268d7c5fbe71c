"""The head of a huge message the chat view shows, and its note (pure)."""

from __future__ import annotations

from core.sessions.content import TextContent, ThinkingContent
from core.sessions.messages import Message
from tui.widgets._bounded import bounded, bounded_message


def test_text_within_the_limit_is_shown_whole() -> None:
    assert bounded("a\nb", limit=3) == ("a\nb", None)


def test_a_long_text_is_cut_at_a_line_break_near_the_limit() -> None:
    text = "line of text\n" * 100_000  # 1.3 MB
    head, note = bounded(text, limit=1_000)
    assert len(head) <= 1_000 and text.startswith(head) and head.endswith("line of text")
    assert note == "… 1.2 MB more, not shown: /export writes the whole message"


def test_one_long_line_is_cut_at_the_limit_and_sizes_count_bytes() -> None:
    head, note = bounded("é" * 3_000, limit=1_000)
    assert head == "é" * 1_000
    assert note is not None and note.startswith("… 3.9 KB more")


def test_a_message_keeps_its_other_blocks() -> None:
    thinking = ThinkingContent("why")
    message = Message(role="assistant", content=(thinking, TextContent("x" * 5_000)))
    shown, note = bounded_message(message, limit=1_000)
    assert shown.content == (thinking, TextContent("x" * 1_000))
    assert note is not None and "3.9 KB more" in note
    assert bounded_message(shown, limit=1_000) == (shown, None)
