"""What was typed while a reply streamed goes out in order: plain messages
together as one, an edit of a sent message on its own."""

from __future__ import annotations

from core.sessions.entries import Entry
from core.sessions.messages import user_text
from tui.chat.message_queue import MessageQueue, Queued


def edit_of(text: str) -> Entry:
    return Entry.new("s", None, user_text(text))


def test_plain_messages_go_as_one_and_an_edit_alone() -> None:
    queue = MessageQueue()
    edited = edit_of("q1")
    for item in (
        Queued("a", "a"),
        Queued("b", "b"),
        Queued("q1 x", "q1 x", edited=edited),
        Queued("c", "c"),
    ):
        queue.add(item)
    assert queue.texts == ("a", "b", "(edit) q1 x", "c")
    first = queue.take()
    assert first is not None and (first.message, first.edited) == ("a\n\nb", None)
    second = queue.take()
    assert second is not None and (second.message, second.edited) == ("q1 x", edited)
    third = queue.take()
    assert third is not None and third.message == "c"
    assert queue.take() is None and not queue
