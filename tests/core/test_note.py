"""A note pinned at a depth (issue 35): the newest note entry of the path goes
into every request as a ``[Note: TEXT]`` user-role item with exactly N
messages after it, counted as the model sees them; never two user turns in a row."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.sessions.content import TextContent, ToolCallContent, ToolResultContent
from core.sessions.context import build_context
from core.sessions.entries import Entry, Note
from core.sessions.messages import Message
from core.sessions.note import active_note, note_text, pin_note
from tests.core.test_context import MODEL, assistant, chain, user
from tests.strategies import conversation_paths


def after_note(messages: Sequence[Message], note: Note) -> int | None:
    """How many messages follow the one carrying ``note`` (None: not sent)."""
    found = [
        index
        for index, message in enumerate(messages)
        for block in message.content
        if isinstance(block, TextContent) and block.text == note_text(note)
    ]
    assert len(found) <= 1, "the note was sent more than once"
    return len(messages) - 1 - found[0] if found else None


def turns(count: int) -> list:
    """``count`` user/assistant pairs, then a new question."""
    payloads: list = []
    for i in range(count):
        payloads += [user(f"q{i}"), assistant(TextContent(f"a{i}"))]
    return payloads + [user("now")]


@pytest.mark.parametrize("depth", [0, 2, 4, 6])
def test_the_note_has_exactly_depth_messages_after_it(depth: int) -> None:
    note = Note("answer in French", depth=depth)
    path = chain(*turns(1), note, *turns(4)[2:])
    messages = build_context(path, MODEL).messages
    assert after_note(messages, note) == depth
    roles = [m.role for m in messages]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False)), roles


def test_the_note_is_the_last_part_of_its_user_message() -> None:
    note = Note("be brief", depth=2)
    [first, _, last] = build_context(
        chain(user("q"), assistant(TextContent("a")), note, user("now")), MODEL
    ).messages
    assert first.content == (TextContent("q"), TextContent("[Note: be brief]"))
    assert last.content == (TextContent("now"),)


def test_where_the_model_spoke_the_note_joins_the_user_message_before() -> None:
    """Depth 1 falls on the assistant's turn: a user item there would make two
    user turns in a row, so the note goes one earlier (2 messages after it)."""
    note = Note("be brief", depth=1)
    messages = build_context(chain(*turns(2)[:-1], note, user("now")), MODEL).messages
    assert after_note(messages, note) == 2


def test_tool_results_are_not_a_place_for_the_note() -> None:
    call = ToolCallContent("c1", "read_file", {}, "{}")
    result = Message(role="tool_result", content=(ToolResultContent("c1", (TextContent("x"),)),))
    note = Note("be brief", depth=2)
    path = chain(
        user("q"),
        assistant(TextContent("look"), call, stop="tool_use"),
        result,
        assistant(TextContent("done")),
        note,
        user("now"),
    )
    messages = build_context(path, MODEL).messages
    assert [m.role for m in messages] == ["user", "assistant", "tool_result", "assistant", "user"]
    assert after_note(messages, note) == 4
    assert messages[0].content[-1] == TextContent("[Note: be brief]")


def test_a_short_conversation_opens_with_the_note() -> None:
    note = Note("be brief", depth=4)
    [only] = build_context(chain(note, user("hello")), MODEL).messages
    assert only.content == (TextContent("[Note: be brief]"), TextContent("hello"))


def test_before_a_first_message_of_the_model_the_note_is_a_user_item_of_its_own() -> None:
    note = Note("be brief", depth=5)
    messages = pin_note([assistant(TextContent("hi")), user("q")], note)
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert messages[0].content == (TextContent("[Note: be brief]"),)


def test_the_newest_note_wins_and_off_removes_it() -> None:
    old, new = Note("old", depth=0), Note("new", depth=2)
    path = chain(old, *turns(1), new, user("more"))
    assert active_note(path) == new
    messages = build_context(path, MODEL).messages
    assert after_note(messages, old) is None and after_note(messages, new) == 2
    off = chain(*[e.payload for e in path], Note("", depth=4))
    assert active_note(off) is None
    assert all(after_note(build_context(off, MODEL).messages, n) is None for n in (old, new))


def test_depth_and_text_are_checked() -> None:
    with pytest.raises(ValueError):
        Note("x", depth=-1)
    with pytest.raises(ValueError):
        Note.from_dict({"text": "x", "depth": "4"})
    assert Note.from_dict(Note("x", 3).to_dict()) == Note("x", 3)


def _note_entries(path: list[Entry]) -> Note | None:
    notes = [e.payload for e in path if isinstance(e.payload, Note)]
    return notes[-1] if notes and notes[-1].active else None


@settings(max_examples=300)
@given(conversation_paths(), st.sampled_from([None, 60, 3_000]))
def test_any_path_with_a_note_alternates_and_places_it_at_its_depth(path, budget) -> None:
    note = _note_entries(path)
    messages = build_context(path, MODEL, token_budget=budget).messages
    roles = [m.role for m in messages]
    assert all(not (a == b == "user") for a, b in zip(roles, roles[1:], strict=False)), roles
    if note is None or not messages:
        return
    after = after_note(messages, note)
    assert after is not None, "an active note is always sent"
    place = len(messages) - 1 - note.depth
    if place >= 0 and messages[place].role == "user":
        assert after == note.depth
    else:
        assert after > note.depth or place < 0
