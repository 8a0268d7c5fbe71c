"""The core model: lossless round trips and validation."""

from __future__ import annotations

import json

import pytest
from hypothesis import given

from core.sessions.content import TextContent, block_from_dict
from core.sessions.entries import Entry, payload_from_json
from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import Message, Usage
from tests.strategies import entries, messages, payloads, usages


@given(messages)
def test_message_round_trip_through_json(message: Message) -> None:
    data = json.loads(json.dumps(message.to_dict()))
    assert Message.from_dict(data) == message


@given(payloads)
def test_every_payload_round_trips(payload) -> None:
    entry = Entry.new("session", None, payload)
    data = json.loads(json.dumps(entry.to_dict()))
    assert Entry.from_dict(data) == entry
    assert payload_from_json(entry.type, data["payload"]) == payload


@given(entries)
def test_entry_round_trip(entry: Entry) -> None:
    assert Entry.from_dict(json.loads(json.dumps(entry.to_dict()))) == entry


@given(usages, usages)
def test_usage_adds_part_by_part(a: Usage, b: Usage) -> None:
    total = a + b
    assert total.input_tokens == a.input_tokens + b.input_tokens
    assert total.cost == pytest.approx(a.cost + b.cost)
    assert Usage.from_dict(total.to_dict()) == total


def test_unknown_types_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown content block"):
        block_from_dict({"type": "hologram"})
    with pytest.raises(ValueError, match="unknown role"):
        Message(role="robot")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown stop reason"):
        Message(role="assistant", stop_reason="tired")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown entry type"):
        Entry.from_dict(
            {"id": "x", "session_id": "s", "type": "poem", "created_at": now_iso(), "payload": {}}
        )


def test_tool_result_may_not_nest_tool_calls() -> None:
    with pytest.raises(ValueError):
        block_from_dict(
            {
                "type": "tool_result",
                "tool_call_id": "a",
                "content": [{"type": "thinking", "text": "x"}],
            }
        )


def test_uuid7_is_time_ordered_and_unique() -> None:
    values = [uuid7() for _ in range(5000)]
    assert values == sorted(values)
    assert len(set(values)) == len(values)
    assert all(v[14] == "7" for v in values)


def test_message_text_joins_text_blocks_only() -> None:
    message = Message(role="assistant", content=(TextContent("a"), TextContent("b")))
    assert message.text == "a\nb"
