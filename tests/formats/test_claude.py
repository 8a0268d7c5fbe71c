"""Claude Code session files: the tree from ``parentUuid``, replies streamed
as several lines joined, tool calls with their results, thinking with its
signature, images, sub-agent runs as branches, the summary as the title, and
anything unreadable refused with its line before anything is written."""

from __future__ import annotations

import json

import pytest

from core.formats import FormatError, detect_format, parse_import
from core.providers.cost import prices_for
from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.context import build_context
from core.sessions.entries import Compaction
from tests.formats.helpers import FIXTURES
from tests.formats.tree_shape import path_to

CLAUDE = FIXTURES / "claude"


def _import(name: str):
    text = (CLAUDE / name).read_text()
    assert detect_format(text) == "claude"
    return parse_import(text)


def test_linear_session() -> None:
    imported = _import("linear.jsonl")
    assert imported.format == "claude"
    assert imported.info.title == "Choosing trees for a sunny garden"
    assert imported.info.cwd == "/home/ada/garden"
    assert imported.info.created_at == "2026-02-10T12:00:01.000000Z"
    path = path_to(imported.entries, imported.info.leaf_id)
    assert [(e.message.role, e.message.text) for e in path] == [
        ("user", "Which trees like full sun?"),
        ("assistant", "Oaks, pines and olives like full sun."),
        ("user", "And in clay soil?"),
        ("assistant", "Oaks cope with clay; olives do not."),
    ]
    reply = path[1].message
    assert reply.model == "anthropic/claude-sonnet-4-5-20250929" and reply.stop_reason == "stop"
    usage = reply.usage
    assert (usage.input_tokens, usage.output_tokens) == (12, 40)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (1500, 300)
    assert reply.meta["claude"]["uuid"] == "a1000002-0000-4000-8000-000000000002"
    assert imported.notes == (
        "skipped 1 line (file-history-snapshot 1)",
        "priced 2 replies from litellm's price table (Claude Code records tokens, not costs)",
    )


def test_replies_are_priced_as_tangents_prices_its_own() -> None:
    """Claude Code writes no cost: the overview's cost per model would be $0."""
    imported = _import("linear.jsonl")
    reply = path_to(imported.entries, imported.info.leaf_id)[1].message
    prices = prices_for(reply.model)
    assert prices is not None
    expected = (
        12 * prices["input_cost_per_token"]
        + 40 * prices["output_cost_per_token"]
        + 1500 * prices["cache_read_input_token_cost"]
        + 300 * prices["cache_creation_input_token_cost"]
    )
    assert reply.usage.cost == pytest.approx(expected) and expected > 0


def test_tool_calls_thinking_and_an_image() -> None:
    imported = _import("tools.jsonl")
    path = path_to(imported.entries, imported.info.leaf_id)
    roles = [e.message.role for e in path]
    assert roles == [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "assistant",
        "custom",
        "user",
    ]
    question, reply, read, bash, answer, boundary, thanks = (e.message for e in path)
    image = question.content[1]
    assert isinstance(image, ImageContent) and (image.width, image.height) == (1, 1)
    assert [b.sha256 for b in imported.blobs] == [image.sha256]
    # Three lines of one streamed reply are one message.
    thinking, text, call_read, call_bash = reply.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.signature == "EqQBCkYIBxgCKkBsig0123456789abcdef"
    assert isinstance(text, TextContent) and text.text == "A single red pixel. Reading the notes."
    assert isinstance(call_read, ToolCallContent) and call_read.name == "Read"
    assert call_read.arguments == {"file_path": "/home/ada/garden/notes.txt"}
    assert isinstance(call_bash, ToolCallContent) and call_bash.id == "toolu_01Bash"
    assert reply.stop_reason == "tool_use" and reply.usage.cache_read_tokens == 2000
    assert len(reply.meta["claude"]["merged_uuids"]) == 2
    result = read.content[0]
    assert isinstance(result, ToolResultContent) and result.tool_call_id == "toolu_01Read"
    assert result.text == "     1\tPlant the oaks in March." and not result.is_error
    failed = bash.content[0]
    assert failed.is_error and "No such file" in failed.text
    assert "plant the oaks in March" in answer.text
    assert boundary.custom_type == "claude_compact_boundary"
    assert boundary.text == "Conversation compacted"
    assert thanks.text == "Thanks!"
    assert imported.info.title == "What is in this picture, and what does notes.txt say?"
    assert imported.notes == (
        "skipped 1 line (queue-operation 1)",
        "priced 2 replies from litellm's price table (Claude Code records tokens, not costs)",
    )


def test_sidechain_is_its_own_branch() -> None:
    imported = _import("sidechain.jsonl")
    assert imported.info.title == "Finding frost-hardy trees with a sub-agent"
    path = path_to(imported.entries, imported.info.leaf_id)
    assert [e.message.text for e in path][
        -1
    ] == "The catalogue lists birch and rowan as frost-hardy."
    assert not any(e.message.meta["claude"]["isSidechain"] for e in path)
    task_call = path[1]
    children = [e for e in imported.entries if e.parent_id == task_call.id]
    assert len(children) == 2  # the Task result and the sub-agent's run
    side = next(e for e in children if e.message.role == "user")
    assert side.message.text == "List frost-hardy trees in catalogue.md"
    assert side.message.meta["claude"]["isSidechain"] is True
    run = [e for e in imported.entries if e.message.meta["claude"]["isSidechain"]]
    assert [e.message.role for e in run] == ["user", "assistant", "tool_result", "assistant"]
    assert imported.counts()["branches"] == 2
    assert imported.notes == (
        "kept 1 sub-agent (sidechain) run as branches from where they started",
        "priced 4 replies from litellm's price table (Claude Code records tokens, not costs)",
    )


def test_a_resumed_session_starts_where_the_file_starts() -> None:
    lines = (CLAUDE / "linear.jsonl").read_text().splitlines()
    text = "\n".join(lines[3:]) + "\n"  # the first message is in another file
    imported = parse_import(text, "claude")
    assert imported.entries[0].parent_id is None
    assert any("not in the file" in note for note in imported.notes)


def _refused(text: str) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse_import(text, "claude")
    return caught.value


def test_a_file_that_cannot_be_read_whole_is_refused_with_its_line() -> None:
    lines = (CLAUDE / "tools.jsonl").read_text().splitlines()
    truncated = "\n".join(lines[:4]) + "\n" + lines[4][: len(lines[4]) // 2]
    error = _refused(truncated)
    assert error.line == 5 and "truncated" in error.reason
    broken = list(lines)
    broken[2] = broken[2].replace('"uuid": ', '"uuid" ', 1)
    assert _refused("\n".join(broken)).line == 3


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"uuid": None}, "needs a uuid"),
        ({"uuid": "b2000001-0000-4000-8000-000000000001"}, "duplicate uuid"),
        ({"message": "text"}, "needs a message object"),
        ({"message": {"role": "assistant", "content": 7}}, "content must be a string or a list"),
        ({"timestamp": "yesterday"}, "bad timestamp"),
        (
            {"message": {"role": "assistant", "content": [{"type": "tool_use", "name": "x"}]}},
            "needs an id and a name",
        ),
    ],
)
def test_malformed_lines_are_refused(change: dict, reason: str) -> None:
    lines = (CLAUDE / "tools.jsonl").read_text().splitlines()
    data = json.loads(lines[2])
    data.update(change)
    lines[2] = json.dumps(data)
    error = _refused("\n".join(lines))
    assert error.line == 3 and reason in error.reason


def test_only_unknown_lines_is_nothing_to_import() -> None:
    error = _refused('{"type": "summary", "summary": "x", "leafUuid": "y"}\n')
    assert "no messages" in error.reason


def test_lines_out_of_order_and_cycles() -> None:
    lines = (CLAUDE / "linear.jsonl").read_text().splitlines()
    shuffled = [lines[0], lines[5], lines[4], lines[3], lines[1], lines[2]]
    imported = parse_import("\n".join(shuffled), "claude")
    assert [e.message.text for e in imported.entries][-1] == "Oaks cope with clay; olives do not."
    assert imported.counts()["branches"] == 1
    first = json.loads(lines[1])
    first["parentUuid"] = "a1000004-0000-4000-8000-000000000004"
    lines[1] = json.dumps(first)
    error = _refused("\n".join(lines))
    assert error.line == 2 and "forms a cycle" in error.reason


def test_a_file_starting_with_bookkeeping_lines_is_detected() -> None:
    lines = (CLAUDE / "linear.jsonl").read_text().splitlines()
    snapshot = lines[2]  # file-history-snapshot
    text = "\n".join(
        [snapshot, '{"type": "queue-operation", "operation": "dequeue"}', *lines[1:], lines[0]]
    )
    assert detect_format(text) == "claude"
    assert parse_import(text).info.title == "Choosing trees for a sunny garden"


def test_a_compaction_is_a_compaction() -> None:
    """Claude Code's compact boundary and summary line become one compaction:
    continuing in Tangents sends the summary and what follows, not the
    conversation Claude Code compacted away."""
    imported = _import("compacted.jsonl")
    path = path_to(imported.entries, imported.info.leaf_id)
    compaction = next(e.payload for e in path if isinstance(e.payload, Compaction))
    assert compaction.tokens_before == 155000 and compaction.first_kept_id is None
    assert compaction.summary.endswith("The user plans an orchard; apples were advised.")
    sent = build_context(path, "anthropic/claude-sonnet-4-5").messages
    assert [m.role for m in sent] == ["user", "assistant"]  # the summary joins the question
    assert "apples were advised" in sent[0].text
    assert sent[0].text.endswith("Which apple variety?")
    assert sent[1].text == "Try Cox's Orange Pippin."
    assert imported.counts()["compactions"] == 1
