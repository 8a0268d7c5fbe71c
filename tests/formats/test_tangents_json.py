"""Tangents JSON: lossless round trips (pure and through real SQLite files),
copies under new ids, and malformed documents refused with their line."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.formats import FormatError, detect_format, parse_import
from core.formats.markdown import to_markdown
from core.formats.tangents_json import from_json_text, image_shas, to_json_document
from core.sessions.content import ImageContent, TextContent
from core.sessions.entries import BranchSummary, Compaction, Entry, entry_type_of
from core.sessions.ids import uuid7
from core.sessions.messages import Message
from core.sessions.persistence import Blob, ConflictError, SessionInfo
from storage import SqliteStore
from tests.strategies import payloads


@st.composite
def sessions(draw, max_entries: int = 12) -> tuple[SessionInfo, list[Entry], dict[str, str]]:
    """A random tree (each entry's parent any earlier entry, or none), in creation
    order, with compaction and branch summary references to its own entries,
    a leaf anywhere and labels on some entries."""
    session_id = uuid7()
    entries: list[Entry] = []
    for i in range(draw(st.integers(1, max_entries))):
        payload = draw(payloads)
        earlier = [e.id for e in entries]
        if isinstance(payload, Compaction):
            kept = draw(st.sampled_from(earlier)) if earlier else None
            payload = replace(payload, first_kept_id=kept)
        if isinstance(payload, BranchSummary) and earlier:
            payload = replace(payload, from_id=draw(st.sampled_from(earlier + [None])))
        parent = draw(st.sampled_from([None] + earlier)) if earlier else None
        created = f"2026-02-01T10:{i // 60:02d}:{i % 60:02d}.000000Z"
        entries.append(Entry(uuid7(), parent, session_id, entry_type_of(payload), created, payload))
    labels = {
        e.id: draw(st.text(min_size=1, max_size=8).filter(str.strip))
        for e in entries
        if draw(st.booleans())
    }
    info = SessionInfo(
        id=session_id,
        title=draw(st.none() | st.text(max_size=20)),
        created_at="2026-02-01T09:59:59.000000Z",
        updated_at=entries[-1].created_at,
        leaf_id=draw(st.sampled_from([e.id for e in entries])),
        title_set_by_user=draw(st.booleans()),
        archived=draw(st.booleans()),
        cwd=draw(st.none() | st.just("/work")),
    )
    return info, entries, labels


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_document_round_trips_through_its_json_text(session) -> None:
    info, entries, labels = session
    text = json.dumps(to_json_document(info, entries, labels), indent=2, ensure_ascii=False)
    assert detect_format(text) == "tangents"
    imported = from_json_text(text)
    assert imported.info == info
    assert sorted(imported.entries, key=lambda e: e.created_at) == entries
    assert imported.labels == labels
    positions = {e.id: i for i, e in enumerate(imported.entries)}
    assert all(positions[e.parent_id] < positions[e.id] for e in imported.entries if e.parent_id)


# --- through SQLite -----------------------------------------------------------


async def _export(store: SqliteStore, session_id: str) -> dict:
    info = await store.get_session(session_id)
    entries = await store.entries(session_id)
    blobs = [b for sha in image_shas(entries) if (b := await store.get_blob(sha)) is not None]
    return to_json_document(info, entries, await store.labels(session_id), blobs)


async def _round_trip(
    tmp: Path, info: SessionInfo, entries: list[Entry], labels: dict[str, str], blobs=()
) -> None:
    first = await SqliteStore.open(tmp / "a.db")
    second = await SqliteStore.open(tmp / "b.db")
    try:
        await first.import_session(info, entries, labels, blobs)
        exported = await _export(first, info.id)
        assert exported == to_json_document(info, entries, labels, blobs)
        text = json.dumps(exported, indent=2, ensure_ascii=False)
        imported = parse_import(text)
        await second.import_session(
            imported.info, imported.entries, imported.labels, imported.blobs
        )
        again = json.dumps(await _export(second, info.id), indent=2, ensure_ascii=False)
        assert json.loads(again) == exported
        assert again == json.dumps(
            json.loads(text) | {"labels": json.loads(again)["labels"]}, indent=2, ensure_ascii=False
        )
    finally:
        await first.close()
        await second.close()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(session=sessions(max_entries=8))
def test_export_import_export_through_two_databases_is_identical(tmp_path_factory, session) -> None:
    asyncio.run(_round_trip(tmp_path_factory.mktemp("rt"), *session))


def _png(color: tuple[int, int, int]) -> Blob:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3, 2), color).save(out, "PNG")
    data = out.getvalue()
    return Blob(hashlib.sha256(data).hexdigest(), "image/png", 3, 2, data)


async def test_images_travel_with_their_bytes(tmp_path: Path) -> None:
    blob = _png((0, 128, 0))
    session_id = uuid7()
    image = ImageContent(blob.media_type, blob.sha256, blob.width, blob.height)
    user = Entry(
        uuid7(),
        None,
        session_id,
        "message",
        "2026-02-01T10:00:00.000000Z",
        Message("user", (TextContent("look"), image)),
    )
    info = SessionInfo(session_id, "pics", user.created_at, user.created_at, leaf_id=user.id)
    await _round_trip(tmp_path, info, [user], {user.id: "green"}, [blob])
    fresh = await SqliteStore.open(tmp_path / "b.db")
    try:
        assert (await fresh.get_blob(blob.sha256)).data == blob.data
    finally:
        await fresh.close()


def test_an_image_without_bytes_imports_with_a_note() -> None:
    session_id = uuid7()
    image = ImageContent("image/png", "ab" * 32, 1, 1)
    user = Entry(
        uuid7(),
        None,
        session_id,
        "message",
        "2026-02-01T10:00:00.000000Z",
        Message("user", (image,)),
    )
    info = SessionInfo(session_id, None, user.created_at, user.created_at, leaf_id=user.id)
    imported = from_json_text(json.dumps(to_json_document(info, [user], {})))
    assert imported.notes == (
        "line 1: 1 image(s) have no data in the file; they show only if this database has them",
    )


async def test_existing_session_is_refused_and_new_ids_import_a_consistent_copy(
    tmp_path: Path,
) -> None:
    store = await SqliteStore.open(tmp_path / "t.db")
    try:
        session_id = uuid7()
        root = Entry.new(session_id, None, Message("user", (TextContent("hello"),)))
        answer = Entry.new(
            session_id,
            root.id,
            Message("assistant", (TextContent("hi"),), stop_reason="interrupted"),
        )
        other = Entry.new(session_id, root.id, Message("assistant", (TextContent("hey"),)))
        summary = Entry.new(
            session_id, other.id, BranchSummary(answer.id, "the interrupted branch")
        )
        compaction = Entry.new(session_id, summary.id, Compaction("said hello", other.id, 10))
        entries = [root, answer, other, summary, compaction]
        info = SessionInfo(
            session_id, "greetings", root.created_at, compaction.created_at, leaf_id=compaction.id
        )
        await store.import_session(info, entries, {answer.id: "cut off"})
        text = json.dumps(await _export(store, session_id))

        imported = parse_import(text)
        with pytest.raises(ConflictError, match=session_id):
            await store.import_session(imported.info, imported.entries, imported.labels)
        moved = replace(imported, info=replace(imported.info, id=uuid7()))
        moved_entries = [replace(e, session_id=moved.info.id) for e in moved.entries]
        with pytest.raises(ConflictError, match="already exists"):
            await store.import_session(moved.info, moved_entries, moved.labels)
        assert len(await store.list_sessions()) == 1

        copy = parse_import(text, new_ids=True)
        await store.import_session(copy.info, copy.entries, copy.labels)
        original, copied = json.loads(text), await _export(store, copy.info.id)
        old_ids = [e["id"] for e in original["entries"]] + [session_id]
        new_ids = [e["id"] for e in copied["entries"]] + [copy.info.id]
        assert not set(old_ids) & set(new_ids)
        renamed = json.dumps(copied)
        for old, new in zip(old_ids, new_ids, strict=False):
            renamed = renamed.replace(new, old)
        assert json.loads(renamed) == original, "the copy is the original with every id replaced"
    finally:
        await store.close()


def test_unfinished_turns_show_in_json_and_markdown() -> None:
    session_id = uuid7()
    entries, parent = [], None
    for stop in ("aborted", "interrupted", "error"):
        entry = Entry.new(
            session_id,
            parent,
            Message(
                "assistant",
                (TextContent(f"cut {stop}"),),
                stop_reason=stop,
                error="boom" if stop == "error" else None,
            ),
        )
        entries.append(entry)
        parent = entry.id
    info = SessionInfo(
        session_id, "t", entries[0].created_at, entries[-1].created_at, leaf_id=parent
    )
    document = to_json_document(info, entries, {})
    assert [e["payload"]["stop_reason"] for e in document["entries"]] == [
        "aborted",
        "interrupted",
        "error",
    ]
    markdown = to_markdown(info, entries)
    assert "## Assistant (**aborted**)" in markdown
    assert "## Assistant (**interrupted**)" in markdown
    assert "## Assistant (**error**, error: boom)" in markdown


# --- malformed documents --------------------------------------------------------


def _document() -> str:
    session_id = uuid7()
    root = Entry.new(session_id, None, Message("user", (TextContent("hello"),)))
    answer = Entry.new(session_id, root.id, Message("assistant", (TextContent("hi"),)))
    info = SessionInfo(session_id, "t", root.created_at, answer.created_at, leaf_id=answer.id)
    return json.dumps(to_json_document(info, [root, answer], {root.id: "start"}), indent=2)


def _refused(text: str) -> FormatError:
    with pytest.raises(FormatError) as caught:
        from_json_text(text)
    return caught.value


def _edited(edit) -> str:
    document = json.loads(_document())
    edit(document)
    return json.dumps(document, indent=2)


def _line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_bad_json_names_the_line() -> None:
    text = _document().replace('"role": "assistant"', '"role" "assistant"')
    error = _refused(text)
    assert error.line == _line_of(text, '"role" "assistant"') and "not valid JSON" in error.reason


def test_truncated_document() -> None:
    text = _document()
    error = _refused(text[: len(text) // 2])
    assert "truncated" in error.reason and error.line == text[: len(text) // 2].count("\n") + 1


def test_parent_that_points_nowhere_names_the_entry_line() -> None:
    text = _edited(lambda d: d["entries"][1].update(parent_id="nowhere"))
    error = _refused(text)
    assert error.line == _line_of(text, '"parent_id": "nowhere"')
    assert error.reason == "entries[1].parent_id: 'nowhere' points to no entry in the file"


def test_a_compaction_keeping_an_entry_not_in_the_file_keeps_nothing_before_it() -> None:
    """The kept tail of a compaction whose first kept entry does not exist starts
    after the compaction (as the context builder read it anyway), with a note."""
    session_id = uuid7()
    root = Entry.new(session_id, None, Message("user", (TextContent("hello"),)))
    compaction = Entry.new(session_id, root.id, Compaction("summary", "gone", 10))
    after = Entry.new(session_id, compaction.id, Message("user", (TextContent("next"),)))
    info = SessionInfo(session_id, "t", root.created_at, after.created_at, leaf_id=after.id)
    text = json.dumps(to_json_document(info, [root, compaction, after], {}), indent=2)

    imported = from_json_text(text)

    kept = imported.entries[1].payload
    assert isinstance(kept, Compaction) and kept.first_kept_id is None
    line = _line_of(text, '"first_kept_id": "gone"')
    assert imported.notes == (
        f"line {line}: the compaction keeps entries "
        "from 'gone', which is not in the file; it keeps nothing from before it",
    )


def test_unknown_entry_type() -> None:
    text = _edited(lambda d: d["entries"][1].update(type="poem"))
    error = _refused(text)
    assert (
        error.line == _line_of(text, '"type": "poem"')
        and "unknown entry type 'poem'" in error.reason
    )


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda d: d.update(format="something-else"), "not a Tangents session export"),
        (lambda d: d.update(version=2), "made by a newer Tangents"),
        (
            lambda d: d["session"].update(leaf_id="nowhere"),
            "session.leaf_id: 'nowhere' is not one of the entries",
        ),
        (
            lambda d: d["labels"].update(nowhere="x"),
            "labels.nowhere: labels an entry that is not in the file",
        ),
        (lambda d: d["entries"][1].update(id=d["entries"][0]["id"]), "duplicate id"),
        (lambda d: d["entries"][0].update(parent_id=d["entries"][1]["id"]), "cycle"),
        (lambda d: d["entries"][1].update(session_id="other"), "is not the exported session"),
        (lambda d: d["entries"][1]["payload"].update(role="wizard"), "unknown role"),
        (
            lambda d: d["entries"][1]["payload"].update(content=[{"type": "hologram"}]),
            "unknown content block type",
        ),
        (lambda d: d["entries"][1]["payload"].pop("role"), "missing 'role'"),
        (
            lambda d: d["blobs"].append(
                {
                    "sha256": "00",
                    "media_type": "image/png",
                    "width": 1,
                    "height": 1,
                    "data": "aGVsbG8=",
                }
            ),
            "does not match its sha256",
        ),
    ],
)
def test_malformed_documents_are_refused(edit, reason: str) -> None:
    error = _refused(_edited(edit))
    assert reason in error.reason
    assert error.line is not None


def test_timestamps_must_be_timestamps() -> None:
    text = _edited(lambda d: d["entries"][0].update(created_at="yesterday"))
    error = _refused(text)
    assert (
        error.line == _line_of(text, '"yesterday"')
        and "'yesterday' is not a timestamp" in error.reason
    )


def test_payload_shapes_are_checked_before_decoding() -> None:
    def edit(d):
        d["entries"][1]["payload"]["content"] = [
            {"type": "image", "media_type": "image/png", "sha256": ["x"], "width": 1, "height": 1}
        ]

    text = _edited(edit)
    error = _refused(text)
    assert error.reason == "entries[1].payload.content[0].sha256: must be str"
    assert error.line == _line_of(text, '"sha256": [')
