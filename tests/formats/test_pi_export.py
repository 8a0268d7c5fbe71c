"""Export to pi: a version 3 file with the whole tree, laid out as pi's own
session manager reads it, that a Tangents import turns back into the same
tree (texts, shape, current leaf), through real SQLite files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from core.formats import detect_format, parse_import
from core.formats.export import export_text
from core.formats.pi import from_pi_jsonl
from core.formats.pi_export import to_pi_jsonl
from core.sessions.content import ImageContent, ToolResultContent
from core.sessions.entries import Compaction
from storage import SqliteStore
from tests.formats.helpers import PI_LOCAL, PI_REAL
from tests.formats.sample import sample_session
from tests.formats.test_tangents_json import sessions
from tests.formats.tree_shape import describe, path_to, same_entries, shape


def without_images(info, entries, labels):
    """The strategy's images have no bytes (a pi file must carry them)."""
    plain = []
    for entry in entries:
        message = entry.message
        if message is not None:
            blocks = []
            for block in message.content:
                if isinstance(block, ToolResultContent):
                    block = replace(
                        block,
                        content=tuple(b for b in block.content if not isinstance(b, ImageContent)),
                    )
                if not isinstance(block, ImageContent):
                    blocks.append(block)
            entry = replace(entry, payload=replace(message, content=tuple(blocks)))
        plain.append(entry)
    return info, plain, labels


def _lines(text: str) -> list[dict]:
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_file_is_pi_version_3_with_every_entry_linked() -> None:
    sample = sample_session()
    lines = _lines(to_pi_jsonl(sample.info, sample.entries, sample.labels, sample.blobs))
    header, body = lines[0], lines[1:]
    assert header == {
        "type": "session",
        "version": 3,
        "id": sample.info.id,
        "timestamp": sample.info.created_at,
        "cwd": "/home/ada/garden",
    }
    assert all({"type", "id", "parentId", "timestamp"} <= set(line) for line in body)
    seen: set[str] = set()
    for line in body:  # parents before children, as pi appends them
        assert line["parentId"] is None or line["parentId"] in seen
        seen.add(line["id"])
    tree = [line for line in body if "partOf" not in line][: len(sample.entries)]
    assert {line["id"] for line in tree} == {e.id for e in sample.entries}
    kinds = [line["type"] for line in body]
    # The model change is followed by the thinking level change pi reads.
    thinking = next(line for line in body if line["type"] == "thinking_level_change")
    assert thinking["parentId"] == sample.ids["model"] and thinking["thinkingLevel"] == "high"
    assert body[body.index(thinking) + 1]["parentId"] == thinking["id"]
    assert kinds.count("message") == 11 and kinds.count("custom") == 2
    assert kinds.count("compaction") == kinds.count("branch_summary") == 1
    assert kinds.count("model_change") == 1
    # The file ends with the labels and the title, chained below the leaf a4.
    assert [line["type"] for line in body[-3:]] == ["label", "label", "session_info"]
    assert body[-3]["parentId"] == sample.ids["a4"]
    assert body[-1]["name"] == "Trees for the garden"
    assert {(line["targetId"], line["label"]) for line in body[-3:-1]} == set(sample.labels.items())


def test_entries_use_pi_field_names() -> None:
    sample = sample_session()
    body = {
        line["id"]: line
        for line in _lines(to_pi_jsonl(sample.info, sample.entries, sample.labels, sample.blobs))
    }
    ids = sample.ids
    user = body[ids["u1"]]["message"]
    assert user["role"] == "user" and user["content"][0] == {"type": "text", "text": "Plant oaks?"}
    image = user["content"][1]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert image["data"].startswith("iVBOR")  # base64 PNG
    assistant = body[ids["a1"]]["message"]
    assert assistant["content"] == [
        {"type": "thinking", "thinking": "Check the notes first.", "thinkingSignature": "sig-123"},
        {"type": "text", "text": "Let me read the notes."},
        {
            "type": "toolCall",
            "id": "call_1",
            "name": "read_file",
            "arguments": {"path": "notes.md"},
        },
    ]
    assert (assistant["provider"], assistant["model"], assistant["stopReason"]) == (
        "anthropic",
        "claude-x",
        "toolUse",
    )
    assert assistant["usage"]["input"] == 100 and assistant["usage"]["cacheRead"] == 50
    assert assistant["usage"]["cost"]["total"] == sample.entries[3].payload.usage.cost
    assert isinstance(assistant["timestamp"], int)
    result = body[ids["t1"]]["message"]
    assert result == {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read_file",
        "content": [{"type": "text", "text": "oaks: full sun"}],
        "isError": False,
        "timestamp": result["timestamp"],
    }
    compaction = body[ids["compaction"]]
    assert compaction["firstKeptEntryId"] == ids["u3"] and compaction["tokensBefore"] == 1234
    assert body[ids["bs"]]["fromId"] == ids["u2"]
    change = body[ids["model"]]
    assert (change["provider"], change["modelId"]) == ("anthropic", "claude-x")
    # pi has no system prompt or note entries: they travel as Tangents custom entries.
    assert body[ids["system"]]["type"] == "custom"
    assert body[ids["system"]]["customType"] == "tangents"


async def test_round_trip_through_pi_gives_the_same_tree(tmp_path: Path) -> None:
    sample = sample_session()
    first = await SqliteStore.open(tmp_path / "a.db")
    second = await SqliteStore.open(tmp_path / "b.db")
    try:
        await first.import_session(
            sample.info, sample.entries, sample.labels, list(sample.blobs.values())
        )
        text = await export_text(first, sample.info, "pi")
        assert detect_format(text) == "pi"
        imported = parse_import(text)
        assert imported.notes == ()
        await second.import_session(
            imported.info, imported.entries, imported.labels, imported.blobs
        )
        info = await second.get_session(imported.info.id)
        entries = await second.entries(info.id)
        assert shape(entries) == shape(sample.entries)
        # Tangents' own record is unchanged but for the ids: every message field
        # (the client that answered, a missing usage, an interrupted stop, meta).
        assert same_entries(sample.entries, entries) == []
        assert [describe(e) for e in path_to(entries, info.leaf_id)] == [
            describe(e) for e in path_to(sample.entries, sample.info.leaf_id)
        ]
        assert info.title == sample.info.title and info.cwd == sample.info.cwd
        old_key = {e.id: describe(e) for e in sample.entries}
        new_key = {e.id: describe(e) for e in entries}
        labels = await second.labels(info.id)
        assert {new_key[k]: v for k, v in labels.items()} == {
            old_key[k]: v for k, v in sample.labels.items()
        }
        kept = next(e for e in entries if isinstance(e.payload, Compaction))
        assert new_key[kept.payload.first_kept_id] == old_key[sample.ids["u3"]]
        image = next(b for e in entries if e.message for b in e.message.images)
        assert isinstance(image, ImageContent)
        assert (await second.get_blob(image.sha256)).data == sample.blobs[image.sha256].data
        by_text = {new_key[e.id]: e for e in entries}
        a1 = by_text[old_key[sample.ids["a1"]]].message
        assert a1.model == "anthropic/claude-x"
        assert a1.usage == sample.entries[3].payload.usage
        # And a second export of the import is the same file but for the ids.
        again = await export_text(second, info, "pi")
        assert len(again.splitlines()) == len(text.splitlines())
    finally:
        await first.close()
        await second.close()


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_any_tree_survives_the_round_trip(session) -> None:
    info, entries, labels = without_images(*session)
    text = to_pi_jsonl(info, entries, labels, {})
    imported = parse_import(text, "pi")
    assert shape(imported.entries) == shape(entries)
    assert same_entries(entries, imported.entries) == []
    assert [describe(e) for e in path_to(imported.entries, imported.info.leaf_id)] == [
        describe(e) for e in path_to(entries, info.leaf_id)
    ]


@pytest.mark.parametrize(
    ("name", "compactions"), [("before-compaction.jsonl", 2), ("large-session.jsonl", 0)]
)
def test_real_pi_sessions_come_back_the_same(name: str, compactions: int) -> None:
    """pi -> Tangents -> pi -> Tangents: the same tree, leaf and compaction targets."""
    first = from_pi_jsonl((PI_REAL / name).read_text())
    blobs = {blob.sha256: blob for blob in first.blobs}
    again = from_pi_jsonl(to_pi_jsonl(first.info, first.entries, first.labels, blobs))
    assert again.notes == ()
    assert shape(again.entries) == shape(first.entries)
    assert [describe(e) for e in path_to(again.entries, again.info.leaf_id)] == [
        describe(e) for e in path_to(first.entries, first.info.leaf_id)
    ]

    def kept(imported) -> list:
        by_id = {e.id: e for e in imported.entries}
        return [
            describe(by_id[e.payload.first_kept_id])
            for e in imported.entries
            if isinstance(e.payload, Compaction) and e.payload.first_kept_id
        ]

    assert kept(again) == kept(first) and len(kept(first)) == compactions


def test_a_lone_surrogate_is_written_as_an_escape_and_read_back_replaced() -> None:
    """Written as an escape (the file stays UTF-8); read back as U+FFFD with a
    note, since a lone surrogate cannot be stored as text."""
    sample = sample_session()
    info = replace(sample.info, title="broken \ud800 title")
    text = to_pi_jsonl(info, sample.entries, sample.labels, sample.blobs)
    text.encode("utf-8")  # writable
    assert "\\ud800" in text
    imported = parse_import(text, "pi")
    assert imported.info.title == "broken \ufffd title"
    assert any("surrogate" in note for note in imported.notes)


def test_fields_a_pi_import_kept_are_written_back() -> None:
    first = from_pi_jsonl((PI_LOCAL / "linear-v1.jsonl").read_text())
    lines = [
        json.loads(line) for line in to_pi_jsonl(first.info, first.entries, {}, {}).splitlines()
    ]
    calls = [
        block
        for line in lines
        if line["type"] == "message"
        for block in line["message"]["content"]
        if isinstance(block, dict) and block["type"] == "toolCall"
    ]
    assert any("partialJson" in call for call in calls)
    assistant = next(
        line["message"] for line in lines if line.get("message", {}).get("role") == "assistant"
    )
    assert assistant["api"]  # pi's own field, kept by the import


def test_a_branch_summary_naming_an_entry_written_after_it_keeps_its_origin() -> None:
    """With the leaf on branch A, branch B (and its summary of A) is written
    first: the summary's ``fromId`` names an entry further down the file."""
    sample = sample_session()
    info = replace(sample.info, leaf_id=sample.ids["a3"])
    text = to_pi_jsonl(info, sample.entries, sample.labels, sample.blobs)
    lines = [line["id"] for line in _lines(text)[1:]]
    assert lines.index(sample.ids["bs"]) < lines.index(sample.ids["u2"])
    imported = from_pi_jsonl(text)
    assert same_entries(sample.entries, imported.entries) == []
    summary = next(e for e in imported.entries if e.type == "branch_summary")
    origin = next(e for e in imported.entries if e.id == summary.payload.from_id)
    assert origin.message is not None and origin.message.text == "And birches?"
