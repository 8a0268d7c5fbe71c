"""MPLP dialogs validate against the MPLP dialog schema (with its common/
references and date-time formats) and keep what plain text cannot hold."""

from __future__ import annotations

import json

from hypothesis import given, settings

from core.formats.mplp import mplp_id, to_mplp_dialog
from core.formats.pi import from_pi_jsonl
from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, entry_type_of
from core.sessions.ids import uuid7
from core.sessions.messages import Message, Usage
from core.sessions.persistence import SessionInfo
from tests.formats.helpers import MPLP, PI_LOCAL, PI_REAL, mplp_errors
from tests.strategies import conversation_paths


def _info(path: list[Entry], **fields) -> SessionInfo:
    return SessionInfo(
        id=uuid7(),
        title="t",
        created_at="2026-01-01T00:00:00.000000Z",
        updated_at="2026-01-01T01:00:00.000000Z",
        leaf_id=path[-1].id if path else None,
        **fields,
    )


def test_the_validator_checks_references_and_formats() -> None:
    example = json.loads((MPLP / "examples" / "dialog.with-events.json").read_text())
    assert mplp_errors(example) == []
    example["dialog_id"] = uuid7()
    example["messages"][0]["timestamp"] = "2026-13-01T00:00:00Z"
    example["events"][0]["event_type"] = "Not.Valid"
    errors = mplp_errors(example)
    assert len(errors) == 3, errors


@settings(max_examples=100, deadline=None)
@given(conversation_paths())
def test_any_branch_gives_a_valid_dialog(path: list[Entry]) -> None:
    dialog = to_mplp_dialog(_info(path, archived=len(path) % 2 == 0, cwd="/p"), path)
    assert mplp_errors(dialog) == []
    messages = [e for e in path if isinstance(e.payload, Message)]
    assert [m["event"]["data"]["entry_id"] for m in dialog["messages"]] == [e.id for e in messages]


def test_imported_pi_sessions_give_valid_dialogs() -> None:
    for path in (PI_REAL / "before-compaction.jsonl", PI_LOCAL / "branched.jsonl"):
        imported = from_pi_jsonl(path.read_text())
        by_id = {e.id: e for e in imported.entries}
        node, branch = by_id[imported.info.leaf_id], []
        while node is not None:
            branch.append(node)
            node = by_id.get(node.parent_id)
        dialog = to_mplp_dialog(imported.info, branch[::-1], imported.labels)
        assert mplp_errors(dialog) == [], path.name


def test_content_roles_ids_and_events() -> None:
    payloads = [
        Message("system", (TextContent("Be brief."),)),
        ModelChange("anthropic/claude-x", "high"),
        Message("user", (TextContent("Look:"), ImageContent("image/png", "a" * 64, 4, 3))),
        Message(
            "assistant",
            (
                ThinkingContent("secret"),
                TextContent("Reading."),
                ToolCallContent("c1", "read", {"p": "x"}, '{"p": "x"}'),
            ),
            model="anthropic/claude-x",
            usage=Usage(input_tokens=5),
            stop_reason="tool_use",
        ),
        Message("tool_result", (ToolResultContent("c1", (TextContent("boom"),), is_error=True),)),
        Compaction("so far", None, 50),
        BranchSummary(None, "elsewhere"),
        Message("custom", (TextContent("note"),), custom_type="info"),
        Message("assistant", (TextContent("Sorry"),), stop_reason="aborted"),
    ]
    path: list[Entry] = []
    for i, payload in enumerate(payloads):
        path.append(
            Entry(
                uuid7(),
                path[-1].id if path else None,
                "s",
                entry_type_of(payload),
                f"2026-01-01T00:00:{i:02d}.000000Z",
                payload,
            )
        )
    info = _info(path, cwd="/home/ada/project")
    dialog = to_mplp_dialog(info, path, {path[2].id: "the picture"})
    assert mplp_errors(dialog) == []
    assert [(m["role"], m["content"]) for m in dialog["messages"]] == [
        ("system", "Be brief."),
        ("user", "Look:\n\n[image: image/png 4x3]"),
        ("assistant", 'Reading.\n\n[tool call read {"p": "x"}]'),
        ("agent", "[tool error] boom"),
        ("agent", "note"),
        ("assistant", "Sorry"),
    ]
    data = [m["event"]["data"] for m in dialog["messages"]]
    assert data[1]["label"] == "the picture" and data[1]["images"][0]["width"] == 4
    assert data[2]["thinking"] == ["secret"] and data[2]["tool_calls"][0]["arguments"] == {"p": "x"}
    assert data[2]["usage"]["input_tokens"] == 5 and data[2]["stop_reason"] == "tool_use"
    assert data[3]["tool_results"] == [{"tool_call_id": "c1", "is_error": True}]
    assert data[5]["stop_reason"] == "aborted"
    assert [e["event_type"] for e in dialog["events"]] == [
        "dialog.started",
        "dialog.model.changed",
        "dialog.compacted",
        "dialog.branch.summarized",
    ]
    assert dialog["events"][0]["data"]["session_id"] == info.id
    assert dialog["dialog_id"] == mplp_id("session", info.id)
    assert dialog["context_id"] == mplp_id("context", "/home/ada/project")
    assert dialog["status"] == "active" and "ended_at" not in dialog
    again = to_mplp_dialog(info, path, {path[2].id: "the picture"})
    assert again == dialog, "ids are derived, not random: exports are stable"


def test_empty_session_is_valid() -> None:
    assert mplp_errors(to_mplp_dialog(_info([]), [])) == []
