"""pi session files: the real fixtures (linear, version 1) and hand-written
ones (a version 3 tree), mapped faithfully; malformed files refused with the
line and the reason."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from core.formats import FormatError, ImportedSession, detect_format, parse_import
from core.formats.pi import from_pi_jsonl
from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.context import SUMMARY_PREFIX, build_context
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange
from tests.context_texts import context_texts
from tests.formats.helpers import PI_LOCAL, PI_REAL


def path_to(imported: ImportedSession, leaf_id: str | None = None) -> list[Entry]:
    by_id = {e.id: e for e in imported.entries}
    node = by_id[leaf_id or imported.info.leaf_id]
    path = [node]
    while node.parent_id is not None:
        node = by_id[node.parent_id]
        path.append(node)
    return path[::-1]


def by_pi_id(imported: ImportedSession) -> dict[str, Entry]:
    return {
        e.message.meta["pi"]["id"]: e
        for e in imported.entries
        if e.message is not None and "id" in e.message.meta.get("pi", {})
    }


def pi_lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (PI_REAL / name).read_text().splitlines() if line.strip()]


# --- the real files -----------------------------------------------------------


@pytest.fixture(scope="module")
def before_compaction() -> ImportedSession:
    return from_pi_jsonl((PI_REAL / "before-compaction.jsonl").read_text())


def test_real_file_is_one_linear_chain_with_every_message(
    before_compaction: ImportedSession,
) -> None:
    imported = before_compaction
    source = pi_lines("before-compaction.jsonl")
    assert detect_format((PI_REAL / "before-compaction.jsonl").read_text()) == "pi"
    counts = imported.counts()
    assert counts["messages"] == sum(1 for d in source if d["type"] == "message") == 990
    assert counts["compactions"] == 2
    # 5 model changes and 5 thinking-level changes, each a model change.
    assert counts["model_changes"] == 10
    assert counts["branches"] == 1
    path = path_to(imported)
    assert len(path) == len(imported.entries), "the leaf is the end of the one chain"
    assert path[-1] is imported.entries[-1]
    assert imported.info.cwd == source[0]["cwd"]
    assert imported.info.created_at == "2025-12-09T00:53:29.825000Z"
    assert imported.info.title.startswith("alright, read @packages/coding-agent/src/main.ts")


def test_real_file_roles_blocks_and_usage_are_mapped(before_compaction: ImportedSession) -> None:
    messages = [e.message for e in before_compaction.entries if e.message is not None]
    roles = Counter(m.role for m in messages)
    assert roles == {
        "assistant": 484,
        "tool_result": 448,
        "user": 55 + 3,
    }  # bash executions are user turns
    calls = [b for m in messages for b in m.content if isinstance(b, ToolCallContent)]
    assert len(calls) == 454
    call_ids = {c.id for c in calls}
    results = [b for m in messages for b in m.content if isinstance(b, ToolResultContent)]
    assert len(results) == 448 and all(r.tool_call_id in call_ids for r in results)
    thinking = [b for m in messages for b in m.content if isinstance(b, ThinkingContent)]
    source = [
        b
        for d in pi_lines("before-compaction.jsonl")
        if d["type"] == "message"
        for b in d["message"].get("content") or ()
        if isinstance(b, dict) and b["type"] == "thinking"
    ]
    assert len(thinking) == len(source) == 49
    assert [(t.text, t.signature) for t in thinking] == [
        (b["thinking"], b["thinkingSignature"]) for b in source
    ]
    first = next(m for m in messages if m.role == "assistant")
    assert first.model == "anthropic/claude-opus-4-5" and first.provider == "anthropic"
    assert first.stop_reason == "tool_use"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (2775, 141)
    assert first.usage.cost == pytest.approx(0.0174)
    assert first.meta["pi"]["api"] == "anthropic-messages"
    aborted = [m for m in messages if m.stop_reason == "aborted"]
    assert aborted and all(m.error for m in aborted)
    results_with_details = [
        m for m in messages if m.role == "tool_result" and "details" in m.meta.get("pi", {})
    ]
    assert len(results_with_details) == 134
    assert all(m.meta["pi"]["toolName"] for m in messages if m.role == "tool_result")
    bash = [m for m in messages if m.meta.get("pi", {}).get("role") == "bashExecution"]
    assert len(bash) == 3 and bash[0].text.startswith("Ran `ls`\n```\nAGENTS.md")
    partial = [
        m
        for m in messages
        if any("partialJson" in x for x in m.meta.get("pi", {}).get("blocks", {}).values())
    ]
    assert len(partial) == 3


def test_real_file_compactions_keep_from_the_entry_pi_keeps(
    before_compaction: ImportedSession,
) -> None:
    source = pi_lines("before-compaction.jsonl")
    compactions = [e for e in before_compaction.entries if isinstance(e.payload, Compaction)]
    by_id = {e.id: e for e in before_compaction.entries}
    for entry, record in zip(
        compactions, [d for d in source if d["type"] == "compaction"], strict=False
    ):
        kept = by_id[entry.payload.first_kept_id]
        target = source[record["firstKeptEntryIndex"]]
        assert kept.message.text == target["message"]["content"][0]["text"]
        assert entry.payload.tokens_before == record["tokensBefore"]
        assert entry.payload.summary == record["summary"]
    context = build_context(path_to(before_compaction), "anthropic/claude-opus-4-5")
    texts = context_texts(context.messages)
    assert texts[0].startswith(SUMMARY_PREFIX + "# Context Checkpoint")
    assert texts[1] == "can leave it"
    assert context.model == "anthropic/claude-opus-4-5" and context.thinking == "off"


def test_real_file_thinking_levels_follow_the_model() -> None:
    imported = from_pi_jsonl((PI_REAL / "large-session.jsonl").read_text())
    source = pi_lines("large-session.jsonl")
    assert imported.counts()["messages"] == 914
    calls = [b for e in imported.entries if e.message for b in e.message.tool_calls]
    assert len(calls) == 391
    changes = [e.payload for e in imported.entries if isinstance(e.payload, ModelChange)]
    assert len(changes) == 1 + 103
    levels = [d["thinkingLevel"] for d in source if d["type"] == "thinking_level_change"]
    mapped = {"minimal": "low", "xhigh": "high"}
    assert [c.thinking for c in changes[1:]] == [mapped.get(level, level) for level in levels]


# --- hand-written: a version 3 tree ------------------------------------------------


@pytest.fixture(scope="module")
def branched() -> ImportedSession:
    return from_pi_jsonl((PI_LOCAL / "branched.jsonl").read_text())


def test_tree_keeps_both_branches_and_the_leaf_is_the_last_entry(branched: ImportedSession) -> None:
    assert branched.counts() == {
        "entries": 17,
        "messages": 13,
        "compactions": 1,
        "branch_summaries": 1,
        "model_changes": 2,
        "branches": 2,
        "labels": 2,
        "images": 2,
    }
    assert branched.notes == ("skipped 1 extension state entry (type custom)",)
    pi = by_pi_id(branched)
    # The file ends with label and session_info entries: the leaf is their nearest message.
    assert branched.info.leaf_id == pi["a0000020"].id
    answer = pi["a0000006"]
    children = [e for e in branched.entries if e.parent_id == answer.id]
    assert [type(c.payload).__name__ for c in children] == ["Message", "BranchSummary"]
    # The label entry between the answer and "Make it shorter." is not part of the tree.
    assert pi["a0000008"].parent_id == answer.id
    summary = children[1].payload
    assert summary == BranchSummary(
        from_id=answer.id, summary="Tried a shorter answer, then a French one (aborted)."
    )
    assert [e.id for e in path_to(branched)][-1] == pi["a0000020"].id


def test_tree_session_info_labels_and_header(branched: ImportedSession) -> None:
    pi = by_pi_id(branched)
    assert branched.info.title == "Pixels and milk" and branched.info.title_set_by_user
    assert branched.info.cwd == "/home/ada/project"
    assert branched.info.created_at == "2026-01-10T09:00:00.000000Z"
    assert branched.info.updated_at == "2026-01-10T09:01:06.000000Z"
    # a0000004's label was set, then cleared by the last entry.
    assert branched.labels == {pi["a0000003"].id: "picture", pi["a0000009"].id: "short answer"}


def test_tree_blocks_are_mapped_faithfully(branched: ImportedSession) -> None:
    pi = by_pi_id(branched)
    blobs = {b.sha256: b for b in branched.blobs}
    question = pi["a0000003"].message
    text, image = question.content
    assert text == TextContent("What is in this picture? Also read notes.txt.")
    assert isinstance(image, ImageContent) and (image.media_type, image.width, image.height) == (
        "image/png",
        1,
        1,
    )
    assert blobs[image.sha256].data.startswith(b"\x89PNG")
    thinking, said, call = pi["a0000004"].message.content
    assert thinking == ThinkingContent("A one-pixel image. Then the file.", signature="sig-abc")
    assert said == TextContent("I will read the file.")
    assert call == ToolCallContent(
        "toolu_1", "read", {"path": "notes.txt"}, '{"path": "notes.txt"}'
    )
    [result] = pi["a0000005"].message.content
    assert result == ToolResultContent("toolu_1", (TextContent("buy milk"),), is_error=False)
    assert pi["a0000005"].message.meta["pi"]["details"] == {"lines": 1}
    [shot] = pi["a0000019"].message.tool_results
    assert shot.text == "screen captured" and shot.content[1].width == 2
    gemini = pi["a0000018"].message
    assert gemini.model == "google/gemini-2.5-pro"
    assert gemini.meta["pi"]["blocks"] == {"0": {"thoughtSignature": "g-opaque"}}
    redacted = pi["a0000020"].message.thinking[0]
    assert redacted.redacted and redacted.signature == "opaque-redacted"
    aborted = pi["a0000013"].message
    assert (aborted.stop_reason, aborted.error) == ("aborted", "Request was aborted.")
    created = {e.created_at for e in branched.entries}
    assert "2026-01-10T09:00:04.000000Z" in created


def test_tree_custom_message_is_a_user_turn_and_custom_state_is_skipped(
    branched: ImportedSession,
) -> None:
    reminder = [
        e.message
        for e in branched.entries
        if e.message and e.message.meta.get("pi", {}).get("type") == "custom_message"
    ]
    [message] = reminder
    assert message.role == "user" and message.text == "Remember: the user prefers English."
    assert message.meta["pi"]["customType"] == "reminder" and message.meta["pi"]["details"] == {
        "source": "todo-ext"
    }


def test_tree_compaction_and_models_drive_the_context(branched: ImportedSession) -> None:
    pi = by_pi_id(branched)
    [compaction] = [e for e in branched.entries if isinstance(e.payload, Compaction)]
    assert compaction.payload.first_kept_id == pi["a0000008"].id
    assert compaction.payload.details == {"readFiles": ["notes.txt"], "modifiedFiles": []}
    branch_a = path_to(branched, pi["a0000013"].id)
    context = build_context(branch_a, "openai/gpt-x")
    assert context.model == "anthropic/claude-sonnet-4-5" and context.thinking == "high"
    texts = context_texts(context.messages)
    assert texts[0].startswith(SUMMARY_PREFIX) and texts[1:3] == [
        "Make it shorter.",
        "Red pixel. Buy milk.",
    ]
    assert texts[3] == "And in French?"
    changes = [e.payload for e in branch_a if isinstance(e.payload, ModelChange)]
    assert changes == [
        ModelChange("anthropic/claude-sonnet-4-5", "off"),
        ModelChange("anthropic/claude-sonnet-4-5", "high"),
    ]


# --- hand-written: version 1 ---------------------------------------------------


def test_version_1_file_counts_lines_without_blanks_and_maps_bash() -> None:
    imported = from_pi_jsonl((PI_LOCAL / "linear-v1.jsonl").read_text())
    path = path_to(imported)
    assert len(path) == len(imported.entries) == 11  # 9 messages, a model change, a compaction
    [compaction] = [e.payload for e in path if isinstance(e.payload, Compaction)]
    kept = next(e for e in path if e.id == compaction.first_kept_id)
    assert kept.message.text == "Now summarize the README."
    [change] = [e.payload for e in path if isinstance(e.payload, ModelChange)]
    assert change == ModelChange("openai/gpt-5", "high"), "header model, xhigh -> high"
    bash = [
        e.message
        for e in path
        if e.message and e.message.meta.get("pi", {}).get("role") == "bashExecution"
    ]
    assert [m.role for m in bash] == ["user", "custom"]
    assert bash[0].text == "Ran `git status`\n```\nclean\n```"
    assert bash[1].custom_type == "bash_execution"
    assert "output" not in bash[0].meta["pi"] and bash[0].meta["pi"]["command"] == "git status"
    call = path[1].message.tool_calls[0]
    assert call.arguments == {"command": "ls"}
    assert path[1].message.meta["pi"]["blocks"]["0"]["partialJson"] == '{"command":"ls"}'
    assert imported.info.leaf_id == path[-1].id and path[-1].message.text == "Thanks."
    assert "id" not in path[0].message.meta["pi"], "version 1 entries have no pi id to keep"


def test_each_import_gets_fresh_ids() -> None:
    text = (PI_LOCAL / "branched.jsonl").read_text()
    first, second = from_pi_jsonl(text), from_pi_jsonl(text)
    assert first.info.id != second.info.id
    assert not {e.id for e in first.entries} & {e.id for e in second.entries}


# --- malformed files ---------------------------------------------------------------


def _lines() -> list[str]:
    return (PI_LOCAL / "branched.jsonl").read_text().splitlines()


def _refused(text: str) -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse_import(text, "pi")
    return caught.value


def _replace(line_no: int, **changes) -> str:
    lines = _lines()
    data = json.loads(lines[line_no - 1])
    data.update(changes)
    lines[line_no - 1] = json.dumps(data)
    return "\n".join(lines) + "\n"


def test_bad_json_line_names_its_number() -> None:
    lines = _lines()
    lines[8] = lines[8].replace('"id":', '"id" ', 1)
    error = _refused("\n".join(lines) + "\n")
    assert error.line == 9 and "not valid JSON" in error.reason and "truncated" not in error.reason


def test_parent_that_points_nowhere() -> None:
    error = _refused(_replace(12, parentId="deadbeef"))
    assert error.line == 12 and "parentId 'deadbeef' points to no entry" in error.reason


def test_unknown_entry_type_is_skipped_with_a_note() -> None:
    """A later pi (or another tool) may write entry types this importer does
    not know: they are skipped like extension state, their children kept."""
    imported = parse_import(_replace(5, type="mystery"), "pi")
    reference = from_pi_jsonl("\n".join(_lines()))
    assert imported.counts()["messages"] == reference.counts()["messages"] - 1
    assert any(
        "1 entry of types this importer does not know (mystery)" in n for n in imported.notes
    )
    assert imported.info.leaf_id is not None


@pytest.mark.parametrize("cut", [0.5, 0.93])
def test_truncated_file(cut: float) -> None:
    text = (PI_LOCAL / "branched.jsonl").read_text()
    end = int(len(text) * cut)
    if text[end - 1] == "\n":
        end -= 2
    truncated = text[:end]
    error = _refused(truncated)
    assert error.line == truncated.count("\n") + 1
    assert "truncated" in error.reason


@pytest.mark.parametrize(
    ("line_no", "changes", "reason"),
    [
        (5, {"id": "a0000003"}, "duplicate id 'a0000003' (first on line 4)"),
        (4, {"parentId": "a0000003"}, "forms a cycle"),
        (2, {"parentId": "a0000002"}, "cycle"),
        (5, {"message": {"role": "wizard", "content": []}}, "unknown message role 'wizard'"),
        (12, {"firstKeptEntryId": "nowhere"}, "firstKeptEntryId 'nowhere' points to no entry"),
        (8, {"targetId": "nowhere"}, "targetId 'nowhere' points to no entry"),
        (15, {"fromId": "nowhere"}, "fromId 'nowhere' points to no entry"),
        (3, {"thinkingLevel": "ultra"}, "unknown thinking level"),
        (
            7,
            {
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "x"}],
                    "stopReason": "done",
                }
            },
            "unknown stopReason",
        ),
        (
            4,
            {
                "message": {
                    "role": "user",
                    "content": [{"type": "image", "data": "not base64!", "mimeType": "image/png"}],
                }
            },
            "not valid base64",
        ),
        (
            4,
            {
                "message": {
                    "role": "user",
                    "content": [{"type": "toolCall", "id": "x", "name": "y"}],
                }
            },
            "misplaced type 'toolCall'",
        ),
        (4, {"timestamp": "the day before"}, "bad timestamp"),
    ],
)
def test_malformed_entries_are_refused_with_their_line(
    line_no: int, changes: dict, reason: str
) -> None:
    error = _refused(_replace(line_no, **changes))
    assert reason in error.reason
    assert error.line == line_no


def test_header_must_be_first() -> None:
    lines = _lines()
    error = _refused("\n".join(lines + [lines[0]]))
    assert error.line == len(lines) + 1 and "second session header" in error.reason
    assert _refused(lines[0] + "\n").reason == "the file holds no messages to import"
    assert _refused("").line is None


def test_newer_version_is_refused() -> None:
    error = _refused(_replace(1, version=4))
    assert error.line == 1 and "version 4" in error.reason


def test_children_before_parents_are_accepted() -> None:
    """pi appends parents first, but a hand-edited file may not."""
    lines = _lines()
    reordered = [lines[0], lines[4], lines[3]] + lines[1:3] + lines[5:]
    imported = from_pi_jsonl("\n".join(reordered))
    reference = from_pi_jsonl("\n".join(lines))
    assert imported.counts() == reference.counts()
    positions = {e.id: i for i, e in enumerate(imported.entries)}
    assert all(positions[e.parent_id] < positions[e.id] for e in imported.entries if e.parent_id)
