"""MessageBuilder: events in, one assistant message out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.providers.assemble import MessageBuilder, parse_arguments
from core.providers.base import (
    Done,
    ErrorEvent,
    ProviderError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)
from core.sessions.content import TextContent, ThinkingContent, ToolCallContent
from core.sessions.messages import Message, Usage


def build(*events) -> MessageBuilder:
    builder = MessageBuilder("m", "p")
    for event in events:
        builder.add(event)
    return builder


def test_blocks_keep_arrival_order_and_merge_runs():
    builder = build(
        ThinkingDelta("think ", new_block=True),
        ThinkingDelta("more"),
        ThinkingDelta(signature="SIG"),
        TextDelta("Hello "),
        TextDelta("world"),
        ToolCallDelta(0, id="c1", name="read_file"),
        ToolCallDelta(0, arguments='{"pa'),
        ToolCallDelta(0, arguments='th": "x"}'),
        UsageEvent(Usage(input_tokens=3, output_tokens=4)),
        Done("tool_use"),
    )
    message = builder.finish()
    assert message.content == (
        ThinkingContent("think more", signature="SIG"),
        TextContent("Hello world"),
        ToolCallContent("c1", "read_file", {"path": "x"}, '{"path": "x"}'),
    )
    assert (message.role, message.model, message.provider) == ("assistant", "m", "p")
    assert message.usage == Usage(input_tokens=3, output_tokens=4)
    assert message.stop_reason == "tool_use"
    assert message.error is None
    assert Message.from_dict(message.to_dict()) == message


def test_interleaved_tool_calls_join_by_index():
    builder = build(
        ToolCallDelta(0, id="a", name="f"),
        ToolCallDelta(1, id="b", name="g"),
        ToolCallDelta(0, arguments='{"x": 1}'),
        ToolCallDelta(1, arguments='{"y": 2}'),
        Done("tool_use"),
    )
    calls = builder.finish().tool_calls
    assert [(c.id, c.arguments) for c in calls] == [("a", {"x": 1}), ("b", {"y": 2})]


def test_redacted_thinking_is_its_own_block():
    builder = build(
        ThinkingDelta("opaque", redacted=True, new_block=True),
        ThinkingDelta("plain", new_block=True),
        Done("stop"),
    )
    assert builder.finish().content == (
        ThinkingContent("opaque", redacted=True),
        ThinkingContent("plain"),
    )


def test_malformed_arguments_become_empty_with_raw_kept():
    message = build(
        ToolCallDelta(0, id="c", name="f", arguments='{"a": [1,'), Done("tool_use")
    ).finish()
    assert message.tool_calls == [ToolCallContent("c", "f", {}, '{"a": [1,')]


def test_aborted_keeps_partial_content():
    builder = build(TextDelta("half an ans"))
    message = builder.finish_aborted()
    assert message.stop_reason == "aborted"
    assert message.text == "half an ans"


def test_error_after_content_keeps_content():
    error = ProviderError("overloaded", "Overloaded")
    message = build(TextDelta("so far"), ErrorEvent(error)).finish()
    assert message.stop_reason == "error"
    assert message.text == "so far"
    assert message.error == str(error)
    assert message.meta == {"error_kind": "overloaded"}


def test_interrupted_and_unfinished_streams_keep_content():
    assert build(TextDelta("a"), Done("interrupted")).finish().stop_reason == "interrupted"
    assert build(TextDelta("a")).finish().stop_reason == "interrupted"


def test_has_content():
    builder = build(UsageEvent(Usage()))
    assert not builder.has_content
    builder.add(TextDelta("x"))
    assert builder.has_content
    assert build(ToolCallDelta(0, name="f")).has_content


@given(st.text())
def test_parse_arguments_never_raises(raw):
    assert isinstance(parse_arguments(raw), dict)


@given(st.lists(st.text(min_size=1), max_size=20))
def test_text_pieces_join_exactly(pieces):
    assert build(*map(TextDelta, pieces), Done("stop")).finish().text == "".join(pieces)
