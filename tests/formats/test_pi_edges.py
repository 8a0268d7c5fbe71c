"""pi files as they are found: fragments without a header, version 1 files
without ids, entry types of later versions, and inconsistent values —
imported with notes (or refused with the line), never a traceback."""

from __future__ import annotations

import json

import pytest

from core.formats import FormatError, detect_format, parse_import
from core.sessions.content import ToolCallContent, ToolResultContent
from core.sessions.entries import Compaction
from tests.formats.helpers import PI_LOCAL


def _jsonl(*lines: dict) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def _message(entry_id: str, parent: str | None, role: str, text: str, **extra) -> dict:
    message = {"role": role, "content": [{"type": "text", "text": text}], **extra}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-10T09:00:00.000Z",
        "message": message,
    }


FRAGMENT = _jsonl(
    _message("m5", "m4", "user", "Carry on from here."),
    _message("m6", "m5", "assistant", "Carrying on.", stopReason="stop"),
    {
        "type": "label",
        "id": "l1",
        "parentId": "m6",
        "timestamp": "2026-01-10T09:00:01.000Z",
        "targetId": "m2",
        "label": "before the cut",
    },
    _message("m7", "m6", "user", "Next."),
)


def test_a_headerless_fragment_is_detected_and_imported_with_a_note() -> None:
    """Before: ``auto`` said "line 2: not valid JSON (Extra data)"."""
    assert detect_format(FRAGMENT) == "pi"
    imported = parse_import(FRAGMENT)
    assert imported.format == "pi"
    assert [e.payload.text for e in imported.entries] == [
        "Carry on from here.",
        "Carrying on.",
        "Next.",
    ]
    assert imported.entries[0].parent_id is None
    assert imported.info.leaf_id == imported.entries[-1].id
    assert any("no session header" in note for note in imported.notes)
    assert imported.labels == {}  # its target is before the fragment


def test_a_fragment_cut_from_the_real_branched_file() -> None:
    lines = (PI_LOCAL / "branched.jsonl").read_text().splitlines()
    fragment = "\n".join(lines[5:]) + "\n"  # from a0000005 on: its parent is cut off
    assert detect_format(fragment) == "pi"
    imported = parse_import(fragment)
    assert imported.counts()["messages"] > 5
    roots = [e for e in imported.entries if e.parent_id is None]
    assert len(roots) == 1


def test_a_compaction_keeping_an_entry_before_the_fragment_keeps_what_follows() -> None:
    text = FRAGMENT + _jsonl(
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "m7",
            "timestamp": "2026-01-10T09:00:02.000Z",
            "summary": "Earlier talk.",
            "firstKeptEntryId": "m3",
            "tokensBefore": 900,
        }
    )
    imported = parse_import(text)
    compaction = imported.entries[-1].payload
    assert isinstance(compaction, Compaction) and compaction.first_kept_id is None
    assert any("line 5: the compaction keeps from 'm3'" in note for note in imported.notes)


def test_a_compaction_keeping_a_missing_entry_in_a_whole_file_is_refused() -> None:
    text = _jsonl(
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-10T09:00:00.000Z"},
        _message("m1", None, "user", "Hi"),
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "m1",
            "timestamp": "2026-01-10T09:00:02.000Z",
            "summary": "s",
            "firstKeptEntryId": "gone",
            "tokensBefore": 1,
        },
    )
    with pytest.raises(FormatError) as caught:
        parse_import(text)
    assert caught.value.line == 3 and "firstKeptEntryId 'gone'" in caught.value.reason


def test_version_1_without_ids_with_tool_calls_and_results() -> None:
    text = _jsonl(
        {"type": "session", "timestamp": "2026-01-10T09:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "timestamp": "2026-01-10T09:00:01.000Z",
            "message": {"role": "user", "content": "List the files."},
        },
        {
            "type": "message",
            "timestamp": "2026-01-10T09:00:02.000Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "t1", "name": "ls", "arguments": {"path": "."}}
                ],
                "stopReason": "toolUse",
            },
        },
        {
            "type": "message",
            "timestamp": "2026-01-10T09:00:03.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "t1",
                "toolName": "ls",
                "content": [{"type": "text", "text": "a.txt"}],
                "isError": False,
            },
        },
        {
            "type": "message",
            "timestamp": "2026-01-10T09:00:04.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "One file."}]},
        },
    )
    imported = parse_import(text)
    assert imported.notes == ()
    messages = [e.message for e in imported.entries]
    assert [m.role for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    call = messages[1].content[0]
    result = messages[2].content[0]
    assert isinstance(call, ToolCallContent) and call.arguments == {"path": "."}
    assert isinstance(result, ToolResultContent) and result.tool_call_id == "t1"
    assert all(e.parent_id == imported.entries[i].id for i, e in enumerate(imported.entries[1:]))


def test_version_1_fragment_without_header_or_ids() -> None:
    text = _jsonl(
        {"type": "message", "message": {"role": "user", "content": "Hi"}},
        {
            "type": "message",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
        },
    )
    imported = parse_import(text)
    assert [e.payload.text for e in imported.entries] == ["Hi", "Hello"]
    assert imported.entries[1].parent_id == imported.entries[0].id


def test_unknown_entry_types_are_skipped_with_a_count() -> None:
    text = _jsonl(
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-10T09:00:00.000Z"},
        _message("m1", None, "user", "Hi"),
        {"type": "custom", "id": "x1", "parentId": "m1", "timestamp": "2026-01-10T09:00:00.000Z", "customType": "ext", "data": {}},
        {"type": "session_info", "id": "x2", "parentId": "x1", "timestamp": "2026-01-10T09:00:00.000Z", "name": "Named"},
        {"type": "context_transform", "id": "x3", "parentId": "x2", "timestamp": "2026-01-10T09:00:00.000Z", "patch": []},
        {"type": "hologram", "id": "x4", "parentId": "x3", "timestamp": "2026-01-10T09:00:00.000Z"},
        _message("m2", "x4", "assistant", "Hello"),
    )  # fmt: skip
    imported = parse_import(text)
    assert [e.payload.text for e in imported.entries] == ["Hi", "Hello"]
    assert imported.entries[1].parent_id == imported.entries[0].id
    assert imported.info.title == "Named"
    assert imported.notes == (
        "skipped 1 extension state entry (type custom)",
        "skipped 2 entries of types this importer does not know (context_transform, hologram)",
    )


def test_a_number_json_does_not_allow_is_refused_with_its_line() -> None:
    text = _jsonl(
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-10T09:00:00.000Z"},
        _message("m1", None, "user", "Hi"),
        _message("m2", "m1", "assistant", "Hello", usage={"input": float("nan"), "output": 3}),
    )
    with pytest.raises(FormatError) as caught:
        parse_import(text)
    assert caught.value.line == 3 and "NaN" in caught.value.reason


def test_a_count_that_is_not_a_number_is_repaired_with_a_note() -> None:
    text = _jsonl(
        {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-10T09:00:00.000Z"},
        _message("m1", None, "user", "Hi"),
        _message("m2", "m1", "assistant", "Hello", usage={"input": "many", "output": 3}),
        {"type": "compaction", "id": "c1", "parentId": "m2", "timestamp": "2026-01-10T09:00:00.000Z",
         "summary": "s", "firstKeptEntryId": "m2", "tokensBefore": "lots"},
    )  # fmt: skip
    imported = parse_import(text)
    assert imported.entries[1].message.usage.input_tokens == 0
    assert imported.entries[1].message.usage.output_tokens == 3
    assert imported.entries[2].payload.tokens_before == 0
    assert imported.notes == (
        "line 3: usage input not a finite number; counted as 0",
        "line 4: tokensBefore 'lots' is not a number; counted as 0",
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "message"}\n{"oops": 1}\n',
        '{"type": 5}\n',
        '{"type": "message", "id": "a", "parentId": null, "message": "hi"}\n',
        '{"type": "message", "id": "a", "parentId": null, "message": {"role": "user", "content": 5}}\n',
    ],
)
def test_malformed_fragments_are_refused_with_a_line(text: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_import(text, "pi")
    assert caught.value.line in (1, 2)


@pytest.mark.parametrize("fmt", ["pi", "claude"])
def test_deep_nesting_is_refused_with_its_line(fmt: str) -> None:
    """Before: RecursionError (a traceback)."""
    good = '{"type": "message", "id": "a", "parentId": null, "message": {"role": "user", "content": "hi"}}'
    deep = (
        '{"type": "message", "id": "b", "parentId": "a", "message": '
        + "[" * 100_000
        + "]" * 100_000
        + "}"
    )
    with pytest.raises(FormatError) as caught:
        parse_import(f"{good}\n{deep}\n", fmt)
    assert caught.value.line == 2 and "nested more than" in caught.value.reason
