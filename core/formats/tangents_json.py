"""Tangents JSON: the whole tree, lossless.

The document holds the session row, every entry (ordered by creation), the
labels and the bytes of every image the entries show, so importing it into
any database gives back an identical session: same ids, timestamps, payloads,
leaf, title and labels; exporting that again gives the same document.

Importing into a database that already holds the session (or any of its
entry ids) is refused; ``new_ids=True`` imports a copy with fresh ids,
remapped consistently (parents, the leaf, labels, compaction and branch
summary references).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from core.formats.base import (
    FormatError,
    ImportedSession,
    JsonReader,
    TreeError,
    json_error,
    line_of,
    parent_first,
    parse_timestamp,
)
from core.sessions.attachments import AttachmentError
from core.sessions.content import FileContent, ImageContent, ToolResultContent
from core.sessions.entries import ENTRY_TYPES, BranchSummary, Compaction, Entry, payload_from_json
from core.sessions.file_attachments import imported_blob
from core.sessions.ids import uuid7
from core.sessions.images import ImageError, image_content
from core.sessions.persistence import SESSION_STATES, Blob, SessionInfo

JSON_FORMAT = "tangents-session"
JSON_VERSION = 1


def to_json_document(
    info: SessionInfo,
    entries: Sequence[Entry],
    labels: Mapping[str, str],
    blobs: Iterable[Blob] = (),
) -> dict[str, Any]:
    """The whole tree: importing it back gives an identical session."""
    return {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "session": info.to_dict(),
        "entries": [entry.to_dict() for entry in entries],
        "labels": dict(labels),
        "blobs": [
            {
                "sha256": blob.sha256,
                "media_type": blob.media_type,
                "width": blob.width,
                "height": blob.height,
                "data": base64.b64encode(blob.data).decode("ascii"),
            }
            for blob in sorted(blobs, key=lambda b: b.sha256)
        ],
    }


def image_shas(entries: Iterable[Entry]) -> list[str]:
    """The distinct blobs the entries show (images, and attached files), in
    order of appearance."""
    found: dict[str, None] = {}
    for entry in entries:
        message = entry.message
        if message is not None:
            for image in message.images:
                found.setdefault(image.sha256, None)
            for block in message.content:
                if isinstance(block, FileContent):
                    found.setdefault(block.sha256, None)
    return list(found)


def from_json_text(text: str, *, new_ids: bool = False) -> ImportedSession:
    json_reader = JsonReader()
    try:
        document = json_reader.load(text)
    except json.JSONDecodeError as error:
        raise json_error(error, text) from None
    imported = _Reader(text).read(document, new_ids)
    return replace(imported, notes=imported.notes + tuple(json_reader.notes()))


class _Reader:
    """Validates a document, naming the line of whatever is wrong."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.notes: list[str] = []
        """What was repaired, one sentence each."""

    def fail(self, path: Sequence[str | int], reason: str) -> FormatError:
        where = "".join(
            f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path)
        )
        return FormatError(line_of(self.text, path), f"{where}: {reason}" if where else reason)

    def read(self, document: Any, new_ids: bool) -> ImportedSession:
        if not isinstance(document, dict) or document.get("format") != JSON_FORMAT:
            raise FormatError(1, f'not a Tangents session export (no "format": "{JSON_FORMAT}")')
        version = document.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise self.fail(["version"], "must be a number")
        if version > JSON_VERSION:
            raise self.fail(
                ["version"],
                f"made by a newer Tangents (version {version}; this one reads {JSON_VERSION})",
            )
        info = self.session(document.get("session"))
        entries = self.entries(document.get("entries"), info.id)
        ids = {entry.id for entry in entries}
        if info.leaf_id is not None and info.leaf_id not in ids:
            raise self.fail(["session", "leaf_id"], f"{info.leaf_id!r} is not one of the entries")
        labels = self.labels(document.get("labels", {}), ids)
        blobs = self.blobs(document.get("blobs", []))
        entries = self.images_matched(entries, blobs)
        entries = self.kept_entries_found(entries, ids)
        try:
            ordered = parent_first(entries)
        except TreeError as error:
            index = next(i for i, e in enumerate(entries) if e.id == error.entry_id)
            raise self.fail(["entries", index], str(error).split(": ", 1)[1]) from None
        notes = self.notes
        known = {blob.sha256 for blob in blobs}
        missing = [sha for sha in image_shas(ordered) if sha not in known]
        if missing:
            first = next(i for i, e in enumerate(entries) if missing[0] in image_shas([e]))
            notes.append(
                f"line {line_of(self.text, ['entries', first])}: {len(missing)} image(s) have no data "
                "in the file; they show only if this database has them"
            )
        imported = ImportedSession(
            "tangents", info, tuple(ordered), labels, tuple(blobs), tuple(notes)
        )
        return _with_new_ids(imported) if new_ids else imported

    def session(self, data: Any) -> SessionInfo:
        if not isinstance(data, dict):
            raise self.fail(["session"], "must be an object")
        for key in ("id", "created_at"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise self.fail(["session", key], "must be a non-empty string")
        for key in (
            "title",
            "updated_at",
            "leaf_id",
            "parent_session_id",
            "parent_entry_id",
            "cwd",
        ):
            if data.get(key) is not None and not isinstance(data[key], str):
                raise self.fail(["session", key], "must be a string or null")
        for key in ("created_at", "updated_at"):
            if data.get(key) is not None and parse_timestamp(data[key]) is None:
                raise self.fail(["session", key], f"{data[key]!r} is not a timestamp")
        if data.get("status", "active") not in SESSION_STATES:
            raise self.fail(["session", "status"], f"must be one of {', '.join(SESSION_STATES)}")
        return SessionInfo.from_dict(data)

    def entries(self, data: Any, session_id: str) -> list[Entry]:
        if not isinstance(data, list):
            raise self.fail(["entries"], "must be an array")
        out: list[Entry] = []
        seen: dict[str, int] = {}
        for index, item in enumerate(data):
            entry = self.entry(item, index, session_id)
            if entry.id in seen:
                raise self.fail(
                    ["entries", index],
                    f"duplicate id {entry.id!r} (also entries[{seen[entry.id]}])",
                )
            seen[entry.id] = index
            out.append(entry)
        for index, entry in enumerate(out):
            if entry.parent_id is not None and entry.parent_id not in seen:
                raise self.fail(
                    ["entries", index, "parent_id"],
                    f"{entry.parent_id!r} points to no entry in the file",
                )
        return out

    def entry(self, data: Any, index: int, session_id: str) -> Entry:
        path: list[str | int] = ["entries", index]
        if not isinstance(data, dict):
            raise self.fail(path, "must be an object")
        for key in ("id", "session_id", "type", "created_at"):
            if not isinstance(data.get(key), str) or not data[key]:
                raise self.fail(path + [key], "must be a non-empty string")
        if parse_timestamp(data["created_at"]) is None:
            raise self.fail(path + ["created_at"], f"{data['created_at']!r} is not a timestamp")
        if data.get("parent_id") is not None and not isinstance(data["parent_id"], str):
            raise self.fail(path + ["parent_id"], "must be a string or null")
        if data["session_id"] != session_id:
            raise self.fail(
                path + ["session_id"],
                f"{data['session_id']!r} is not the exported session {session_id!r}",
            )
        kind = data["type"]
        if kind not in ENTRY_TYPES:
            raise self.fail(path + ["type"], f"unknown entry type {kind!r}")
        if not isinstance(data.get("payload"), dict):
            raise self.fail(path + ["payload"], "must be an object")
        problem = payload_problem(kind, data["payload"])
        if problem is not None:
            where, reason = problem
            raise self.fail(path + ["payload", *where], reason)
        try:
            payload = payload_from_json(kind, data["payload"])
        except KeyError as error:
            raise self.fail(path + ["payload"], f"bad {kind}: missing {error}") from None
        except (TypeError, ValueError, AttributeError) as error:
            raise self.fail(path + ["payload"], f"bad {kind}: {error}") from None
        return Entry(
            data["id"], data.get("parent_id"), session_id, kind, data["created_at"], payload
        )

    def labels(self, data: Any, ids: set[str]) -> dict[str, str]:
        if not isinstance(data, dict):
            raise self.fail(["labels"], "must be an object of entry id to label")
        for entry_id, label in data.items():
            if entry_id not in ids:
                raise self.fail(["labels", entry_id], "labels an entry that is not in the file")
            if not isinstance(label, str) or not label:
                raise self.fail(["labels", entry_id], "must be a non-empty string")
        return dict(data)

    def blobs(self, data: Any) -> list[Blob]:
        """The images and files, decoded (within the bounds of attachments,
        :func:`~core.sessions.file_attachments.imported_blob`): bytes that are neither
        are refused; a stated type or size that contradicts
        the bytes is corrected from them, with a note."""
        if not isinstance(data, list):
            raise self.fail(["blobs"], "must be an array")
        out = []
        for index, item in enumerate(data):
            path: list[str | int] = ["blobs", index]
            if not isinstance(item, dict):
                raise self.fail(path, "must be an object")
            try:
                raw = base64.b64decode(item["data"], validate=True)
                stated = (str(item["media_type"]), item["width"], item["height"])
                sha256 = str(item["sha256"])
            except KeyError as error:
                raise self.fail(path, f"missing {error}") from None
            except (TypeError, ValueError, binascii.Error) as error:
                raise self.fail(path, f"bad image: {error}") from None
            if hashlib.sha256(raw).hexdigest() != sha256:
                raise self.fail(path, "the data does not match its sha256")
            try:
                blob = imported_blob(raw)
            except (ImageError, AttachmentError) as error:
                raise self.fail(path, str(error)) from None
            found = (blob.media_type, blob.width, blob.height)
            if stated != found:
                self.notes.append(
                    f"line {line_of(self.text, path)}: blobs[{index}] said "
                    f"{_describe(*stated)} but holds {_describe(*found)}; corrected"
                )
            out.append(blob)
        return out

    def kept_entries_found(self, entries: list[Entry], ids: set[str]) -> list[Entry]:
        """A compaction whose first kept entry is not in the file keeps nothing
        from before it (what the context builder makes of it anyway), with a note."""
        out = []
        for index, entry in enumerate(entries):
            payload = entry.payload
            if isinstance(payload, Compaction) and payload.first_kept_id not in (None, *ids):
                line = line_of(self.text, ["entries", index, "payload", "first_kept_id"])
                self.notes.append(
                    f"line {line}: the compaction keeps entries from {payload.first_kept_id!r}, "
                    "which is not in the file; it keeps nothing from before it"
                )
                entry = replace(entry, payload=replace(payload, first_kept_id=None))
            out.append(entry)
        return out

    def images_matched(self, entries: list[Entry], blobs: list[Blob]) -> list[Entry]:
        """``entries`` with each image block's type and size taken from its
        blob (the decoded bytes), noting how many said otherwise."""
        by_sha = {
            blob.sha256: image_content(blob)
            for blob in blobs
            if blob.media_type.startswith("image/")
        }
        corrected = 0

        def fixed(block: Any) -> Any:
            nonlocal corrected
            if isinstance(block, ImageContent) and block.sha256 in by_sha:
                if block != by_sha[block.sha256]:
                    corrected += 1
                    return by_sha[block.sha256]
            elif isinstance(block, ToolResultContent):
                return replace(block, content=tuple(fixed(c) for c in block.content))
            return block

        out = []
        for entry in entries:
            message = entry.message
            if message is not None and message.images:
                message = message.with_(content=tuple(fixed(b) for b in message.content))
                entry = replace(entry, payload=message)
            out.append(entry)
        if corrected:
            self.notes.append(
                f"{corrected} image block(s) stated a type or size other than their image's; corrected"
            )
        return out


def _describe(media_type: Any, width: Any, height: Any) -> str:
    return f"{media_type} {width}×{height}"


# --- payload shapes ---------------------------------------------------------------
# Decoding trusts stored payloads (it is the hot path of reading a session), so
# an imported one is checked here first: each field's type, as ``to_dict`` writes it.

_NUMBER = (int, float)
_Spec = dict[str, tuple[tuple[type, ...], bool]]  # field -> (types, required)


def _spec(required: dict[str, Any], optional: dict[str, Any]) -> _Spec:
    def types(value: Any) -> tuple[type, ...]:
        return tuple(
            type(None) if t is None else t
            for t in (value if isinstance(value, tuple) else (value,))
        )

    return {
        **{k: (types(v), True) for k, v in required.items()},
        **{k: (types(v), False) for k, v in optional.items()},
    }


_BLOCKS: dict[str, _Spec] = {
    "text": _spec({"text": str}, {}),
    "image": _spec({"media_type": str, "sha256": str, "width": int, "height": int}, {}),
    "file": _spec(
        {"media_type": str, "sha256": str, "name": str, "size": int},
        {"seconds": _NUMBER, "pages": int},
    ),
    "thinking": _spec({}, {"text": str, "signature": (str, None), "redacted": bool}),
    "tool_call": _spec({"id": str, "name": str}, {"arguments": dict, "raw_arguments": str}),
    "tool_result": _spec({"tool_call_id": str}, {"content": list, "is_error": bool}),
}
_PAYLOADS: dict[str, _Spec] = {
    "message": _spec(
        {"role": str},
        {
            "content": list,
            "model": (str, None),
            "provider": (str, None),
            "usage": (dict, None),
            "stop_reason": (str, None),
            "error": (str, None),
            "custom_type": (str, None),
            "meta": dict,
        },
    ),
    "compaction": _spec(
        {"summary": str}, {"first_kept_id": (str, None), "tokens_before": int, "details": dict}
    ),
    "branch_summary": _spec({"summary": str}, {"from_id": (str, None)}),
    "model_change": _spec({"model": str}, {"thinking": str}),
    "note": _spec({"text": str}, {"depth": int}),
}
_USAGE = _spec(
    {},
    {
        k: int
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        )
    }
    | {"cost": dict},
)


def _shape(data: dict[str, Any], spec: _Spec) -> tuple[list[str | int], str] | None:
    for key, (types, required) in spec.items():
        if key not in data:
            if required:
                return [], f"missing {key!r}"
            continue
        value = data[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            return [key], f"must be {names}"
    return None


def payload_problem(kind: str, payload: dict[str, Any]) -> tuple[list[str | int], str] | None:
    """Where (a path inside the payload) and why its shape is wrong; None if it is right."""
    problem = _shape(payload, _PAYLOADS[kind])
    if problem is not None or kind != "message":
        return problem
    if isinstance(payload.get("usage"), dict):
        problem = _shape(payload["usage"], _USAGE)
        if problem is None and isinstance(payload["usage"].get("cost"), dict):
            cost = payload["usage"]["cost"]
            bad = next(
                (k for k, v in cost.items() if not isinstance(v, _NUMBER) or isinstance(v, bool)),
                None,
            )
            problem = (["cost", bad], "must be a number") if bad is not None else None
        if problem is not None:
            return ["usage", *problem[0]], problem[1]
    for index, block in enumerate(payload.get("content", [])):
        problem = _block_problem(block, nested=False)
        if problem is not None:
            return ["content", index, *problem[0]], problem[1]
    return None


def _block_problem(block: Any, nested: bool) -> tuple[list[str | int], str] | None:
    if not isinstance(block, dict):
        return [], "a content block must be an object"
    kind = block.get("type")
    allowed = ("text", "image") if nested else tuple(_BLOCKS)
    if kind not in allowed:
        return ["type"], f"unknown content block type {kind!r}" + (
            " in a tool result" if nested else ""
        )
    problem = _shape(block, _BLOCKS[kind])
    if problem is None and kind == "tool_result":
        for index, inner in enumerate(block.get("content", [])):
            problem = _block_problem(inner, nested=True)
            if problem is not None:
                return ["content", index, *problem[0]], problem[1]
    return problem


def _with_new_ids(imported: ImportedSession) -> ImportedSession:
    """The same session under fresh ids, every reference remapped."""
    mapping = {
        entry.id: uuid7() for entry in sorted(imported.entries, key=lambda e: (e.created_at, e.id))
    }
    session_id = uuid7()

    def remap(entry: Entry) -> Entry:
        payload = entry.payload
        if isinstance(payload, Compaction) and payload.first_kept_id in mapping:
            payload = replace(payload, first_kept_id=mapping[payload.first_kept_id])
        elif isinstance(payload, BranchSummary) and payload.from_id in mapping:
            payload = replace(payload, from_id=mapping[payload.from_id])
        parent = mapping[entry.parent_id] if entry.parent_id is not None else None
        return Entry(mapping[entry.id], parent, session_id, entry.type, entry.created_at, payload)

    info = imported.info
    info = replace(info, id=session_id, leaf_id=mapping.get(info.leaf_id) if info.leaf_id else None)
    return replace(
        imported,
        info=info,
        entries=tuple(remap(entry) for entry in imported.entries),
        labels={mapping[k]: v for k, v in imported.labels.items()},
    )
