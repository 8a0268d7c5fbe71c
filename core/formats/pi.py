"""Import of pi coding-agent session files (JSON lines).

The first line is the ``session`` header (``cwd``, ``timestamp``; version 1
files also name the starting ``provider``/``modelId``/``thinkingLevel``).
Version 2 and 3 entries form a tree through ``id``/``parentId``; version 1
files are one linear chain (ids assigned in order, as pi does when it loads
them, and a compaction's ``firstKeptEntryIndex`` counts lines without the
blank ones, the header being 0).

Entries become Tangents entries:

- ``message``: ``user``, ``assistant`` (text, thinking with its signature,
  tool calls, usage and cost, stop reason, error) and ``toolResult`` (text and
  images, error flag) map block for block. ``bashExecution`` (a command the
  user ran) becomes the user message pi sends the model ("Ran `cmd`" and the
  output), or a custom note when pi kept it out of the context. ``custom`` /
  ``hookMessage`` messages and ``custom_message`` entries, which pi sends to
  the model, become user messages. Fields with no Tangents equivalent
  (``api``, ``toolName``, ``details``, the pi entry id, a block's
  ``thoughtSignature``...) are kept in ``meta["pi"]``.
- ``compaction`` and ``branch_summary`` keep their summaries; ids they point
  at are translated (``firstKeptEntryId`` to the first entry kept).
- ``model_change`` and ``thinking_level_change`` become model changes
  (``provider/modelId`` and the thinking level in force; pi's ``minimal``
  becomes ``low``, ``xhigh`` becomes ``high``). A thinking change before any
  model is known only sets the level for later changes.
- ``label`` entries set (or clear) the label of their target;
  ``session_info`` names the session; ``custom`` entries (extension state)
  and entry types this importer does not know (a later pi's) are skipped
  and counted in the notes. These are not part of the Tangents tree: their
  children hang from their nearest kept ancestor. A Tangents export's own
  ``custom`` entries (:mod:`core.formats.pi_export`) are read back, and so is
  the ``tangents`` field beside its messages (the Tangents fields pi's lose).

A file without its header is a fragment of a session: entries whose parent
is not in it start the tree, and what points before it (a compaction's kept
entry, a label's target) is dropped with a note. Numbers that are not
(``tokensBefore: "lots"``, ``NaN`` usage) count as 0, with a note.

The leaf is the last entry of the file (or its nearest kept ancestor), as
when pi opens the file. Every entry gets a fresh id, so a file can be
imported twice. Anything malformed (bad JSON, an unknown role, an id a whole
file points at that is not in it, a cycle) is a :class:`FormatError` naming
the line.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.formats.attached import attached
from core.formats.base import (
    FormatError,
    ImportedSession,
    JsonReader,
    decode_base64,
    parse_timestamp,
    tool_arguments,
)
from core.sessions.content import (
    Block,
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import (
    BranchSummary,
    Compaction,
    Entry,
    ModelChange,
    Note,
    Payload,
    entry_type_of,
)
from core.sessions.ids import now_iso, uuid7
from core.sessions.images import image_blob
from core.sessions.messages import Message, StopReason, Usage
from core.sessions.persistence import Blob, SessionInfo
from core.sessions.session import derive_title

PI_VERSION = 3
TANGENTS_CUSTOM_TYPE = "tangents"
"""``customType`` of the ``custom`` entries a Tangents export writes for
messages pi has no place for (they carry the Tangents message)."""
TANGENTS_NOTE_TYPE = "tangents-note"
"""``customType`` of the ``custom`` entries a Tangents export writes for a
pinned note (``data``: its text and depth)."""
TANGENTS_POSITION_TYPE = "tangents-position"
"""``customType`` of the entry that closes a Tangents export below its leaf."""
TANGENTS_FIELDS = "tangents"
"""A Tangents export's field beside a message entry's ``message``: what pi's
fields cannot say (meta, the client that answered, no usage, ``interrupted``)."""
THINKING = {
    "off": "off",
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
}
STOP_REASONS: dict[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_use",
    "error": "error",
    "aborted": "aborted",
}


@dataclass
class _Record:
    line: int
    data: dict[str, Any]
    id: str
    parent: str | None


@dataclass
class _State:
    """What the path up to a record leads to."""

    kept: str | None  # our id of the nearest kept entry at or above the record
    model: str | None
    thinking: str


def from_pi_jsonl(text: str) -> ImportedSession:
    return _Importer(text).run()


class _Importer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.session_id = uuid7()
        self.json_reader = JsonReader()
        self.blobs: dict[str, Blob] = {}
        self.labels: dict[str, str] = {}
        self.title: str | None = None
        self.skipped = 0
        self.unknown: Counter[str] = Counter()
        self.repairs: list[str] = []
        self.fragment = False
        self.last_created: str | None = None
        self.later: set[str] = set()
        """Entries a branch summary names before the file reaches them (a
        Tangents export writes the current branch last): resolved at the end."""

    # --- reading lines -------------------------------------------------------

    def run(self) -> ImportedSession:
        header, records = self.read()
        by_id = {r.id: r for r in records}
        for index, record in enumerate(records):
            if record.parent is not None and record.parent not in by_id:
                if not self.fragment:
                    raise FormatError(
                        record.line, f"parentId {record.parent!r} points to no entry in the file"
                    )
                # A fragment starts in the middle of a tree: its first entries become roots.
                records[index] = _Record(record.line, record.data, record.id, None)
        start_model = self.model_name(header.data.get("provider"), header.data.get("modelId"))
        start_thinking = _lookup(THINKING, header.data.get("thinkingLevel")) or "off"
        states: dict[str, _State] = {}
        entries: list[Entry] = []
        for record in _parent_first(records, by_id):
            parent = (
                states[record.parent]
                if record.parent is not None
                else _State(None, start_model, start_thinking)
            )
            try:
                state, entry = self.convert(record, parent, states, by_id)
            except (TypeError, ValueError, AttributeError, OverflowError, RecursionError) as error:
                # A value of the wrong shape somewhere the checks above did not look.
                raise FormatError(
                    record.line, f"malformed {record.data['type']} entry ({error})"
                ) from None
            states[record.id] = state
            if entry is not None:
                entries.append(entry)
        entries = [self.resolved(entry, states) for entry in entries]
        if not entries:
            raise FormatError(header.line, "the file holds no messages to import")
        leaf = states[records[-1].id].kept
        created = parse_timestamp(header.data.get("timestamp")) or entries[0].created_at
        first_user = next(
            (e.message.text for e in entries if e.message is not None and e.message.role == "user"),
            "",
        )
        info = SessionInfo(
            id=self.session_id,
            title=self.title or derive_title(first_user),
            created_at=created,
            updated_at=max(created, max(e.created_at for e in entries)),
            leaf_id=leaf,
            title_set_by_user=self.title is not None,
            cwd=header.data.get("cwd") if isinstance(header.data.get("cwd"), str) else None,
        )
        notes = self.json_reader.notes()
        if self.fragment:
            notes.append(
                "the file has no session header: imported as a fragment of a pi session"
                " (entries whose parent is not in the file start the tree)"
            )
        if self.skipped:
            notes.append(
                f"skipped {self.skipped} extension state entr{'y' if self.skipped == 1 else 'ies'} (type custom)"
            )
        if self.unknown:
            kinds = ", ".join(sorted(self.unknown))
            total = sum(self.unknown.values())
            notes.append(
                f"skipped {total} entr{'y' if total == 1 else 'ies'} of types this importer does not know ({kinds})"
            )
        notes.extend(self.repairs)
        return ImportedSession(
            "pi", info, tuple(entries), self.labels, tuple(self.blobs.values()), tuple(notes)
        )

    def read(self) -> tuple[_Record, list[_Record]]:
        header: _Record | None = None
        records: list[_Record] = []
        index_to_id: list[str | None] = []  # v1: position among non-blank lines -> id
        seen: dict[str, int] = {}
        version = 1
        for number, data in self.json_reader.objects(self.text):
            kind = data.get("type")
            if header is None and kind != "session":
                if not isinstance(kind, str):
                    raise FormatError(
                        number,
                        'not a pi session file: the first line is neither a {"type": "session"} header nor an entry',
                    )
                # No header: a fragment cut from a session file (version by whether entries have ids).
                self.fragment = True
                version = PI_VERSION if "id" in data else 1
                header = _Record(number, {}, "", None)
                index_to_id.append(None)
            if header is None:
                version = data.get("version", 1)
                if not isinstance(version, int) or isinstance(version, bool):
                    raise FormatError(number, "the header's version must be a number")
                if version > PI_VERSION:
                    raise FormatError(
                        number,
                        f"pi session version {version} is newer than this importer knows ({PI_VERSION})",
                    )
                header = _Record(number, data, "", None)
                index_to_id.append(None)
                continue
            if kind == "session":
                raise FormatError(number, "a second session header")
            if not isinstance(kind, str) or not kind:
                raise FormatError(number, "the entry has no type")
            if version < 2:
                entry_id = f"line-{number}"
                parent = records[-1].id if records else None
            else:
                given_id, parent = data.get("id"), data.get("parentId")
                if not isinstance(given_id, str) or not given_id:
                    raise FormatError(number, "the entry has no id")
                entry_id = given_id
                if parent is not None and not isinstance(parent, str):
                    raise FormatError(number, "parentId must be a string or null")
                if entry_id in seen:
                    raise FormatError(
                        number, f"duplicate id {entry_id!r} (first on line {seen[entry_id]})"
                    )
            seen[entry_id] = number
            if version < 2 and kind == "compaction":
                data = dict(data)
                target = data.pop("firstKeptEntryIndex", None)
                if isinstance(target, int) and 0 < target < len(index_to_id):
                    data["firstKeptEntryId"] = index_to_id[target]
            records.append(_Record(number, data, entry_id, parent))
            index_to_id.append(entry_id)
        if header is None:
            raise FormatError(None, "the file is empty")
        return header, records

    # --- converting entries --------------------------------------------------

    def convert(
        self, record: _Record, parent: _State, states: dict[str, _State], by_id: dict[str, _Record]
    ) -> tuple[_State, Entry | None]:
        data, kind = record.data, record.data["type"]
        payload: Payload | None = None
        model, thinking = parent.model, parent.thinking
        if kind == "message":
            message = data.get("message")
            if not isinstance(message, dict):
                raise FormatError(record.line, "a message entry needs a message object")
            payload = self.restored(self.message(message, record), record)
            if payload.role == "assistant" and payload.model:
                model = payload.model
        elif kind == "custom_message":
            payload = self.custom_message(data, record, entry_type=True)
        elif kind == "compaction":
            payload = self.compaction(data, record, parent, states, by_id)
        elif kind == "branch_summary":
            payload = self.branch_summary(data, record, states, by_id)
        elif kind == "model_change":
            model = self.model_name(data.get("provider"), data.get("modelId"))
            if model is None:
                raise FormatError(record.line, "a model_change needs provider and modelId")
            # A Tangents export says the thinking level on the change itself.
            thinking = _lookup(THINKING, data.get("thinkingLevel")) or thinking
            payload = ModelChange(model=model, thinking=thinking)
        elif kind == "thinking_level_change":
            level = data.get("thinkingLevel")
            if not isinstance(level, str) or _lookup(THINKING, level) is None:
                raise FormatError(record.line, f"unknown thinking level {level!r}")
            thinking = THINKING[level]
            # A Tangents export's second half of a model change (``partOf`` it).
            part_of = data.get("partOf")
            if model is not None and not (part_of and part_of == record.parent):
                payload = ModelChange(model=model, thinking=thinking)
        elif kind == "label":
            self.label(data, record, states, by_id)
        elif kind == "session_info":
            name = data.get("name")
            if isinstance(name, str) and name.strip():
                self.title = " ".join(name.split())
        elif kind == "custom" and data.get("customType") == TANGENTS_CUSTOM_TYPE:
            payload = self.tangents_message(data, record)
        elif kind == "custom" and data.get("customType") == TANGENTS_NOTE_TYPE:
            try:
                payload = Note.from_dict(data.get("data") or {})
            except (KeyError, TypeError, ValueError) as error:
                raise FormatError(record.line, f"malformed tangents note ({error})") from None
        elif kind == "custom" and data.get("customType") == TANGENTS_POSITION_TYPE:
            pass
        elif kind == "custom":  # extension state, not part of the conversation
            self.skipped += 1
        else:  # an entry type of a later pi, or of someone else's tool
            self.unknown[kind] += 1
        if payload is None:
            return _State(parent.kept, model, thinking), None
        created = self.timestamp(data, record)
        entry = Entry(
            uuid7(), parent.kept, self.session_id, entry_type_of(payload), created, payload
        )
        self.last_created = created
        return _State(entry.id, model, thinking), entry

    def timestamp(self, data: dict[str, Any], record: _Record) -> str:
        value = data.get("timestamp")
        if value is None and isinstance(data.get("message"), dict):
            value = data["message"].get("timestamp")
        if value is None:
            return self.last_created or now_iso()
        parsed = parse_timestamp(value)
        if parsed is None:
            raise FormatError(record.line, f"bad timestamp {value!r}")
        return parsed

    def compaction(
        self,
        data: dict[str, Any],
        record: _Record,
        parent: _State,
        states: dict[str, _State],
        by_id: dict[str, _Record],
    ) -> Compaction:
        summary = data.get("summary")
        if not isinstance(summary, str):
            raise FormatError(record.line, "a compaction needs a summary")
        target = data.get("firstKeptEntryId")
        first_kept: str | None = None
        if target is not None:
            if self.fragment and isinstance(target, str) and target not in by_id:
                self.repairs.append(
                    f"line {record.line}: the compaction keeps from {target!r}, which is not in"
                    " the file; it keeps only what follows it"
                )
            elif not isinstance(target, str) or target not in by_id:
                raise FormatError(
                    record.line, f"firstKeptEntryId {target!r} points to no entry in the file"
                )
            else:
                first_kept = self.first_kept(record, target, states, by_id)
        tokens = data.get("tokensBefore", 0)
        if not _finite(tokens):
            self.repairs.append(
                f"line {record.line}: tokensBefore {tokens!r} is not a number; counted as 0"
            )
        details = data.get("details")
        details = (
            dict(details)
            if isinstance(details, dict)
            else ({"details": details} if details is not None else {})
        )
        if data.get("fromHook"):
            details["pi_from_hook"] = True
        return Compaction(
            summary=summary,
            first_kept_id=first_kept,
            tokens_before=int(tokens) if _finite(tokens) else 0,
            details=details,
        )

    def first_kept(
        self, record: _Record, target: str, states: dict[str, _State], by_id: dict[str, _Record]
    ) -> str | None:
        """Our id of the first kept entry from ``target`` down to the compaction."""
        chain: list[str] = []
        current = record.parent
        while current is not None and current != target:
            chain.append(current)
            # In a fragment the chain may climb out of the file.
            current = by_id[current].parent if current in by_id else None
        if current is None:
            # Not on the compaction's branch: pi keeps nothing before it; so will we.
            return states[target].kept if target in states else None
        parent = by_id[target].parent
        before = states[parent].kept if parent in states else None
        for pi_id in [target] + list(reversed(chain)):
            if states[pi_id].kept != before:
                return states[pi_id].kept
        return None

    def branch_summary(
        self,
        data: dict[str, Any],
        record: _Record,
        states: dict[str, _State],
        by_id: dict[str, _Record],
    ) -> BranchSummary:
        summary = data.get("summary")
        if not isinstance(summary, str):
            raise FormatError(record.line, "a branch_summary needs a summary")
        origin = data.get("fromId")
        from_id = None
        if origin not in (None, "root") and not (self.fragment and origin not in by_id):
            if not isinstance(origin, str) or origin not in by_id:
                raise FormatError(record.line, f"fromId {origin!r} points to no entry in the file")
            if origin in states:
                from_id = states[origin].kept
            else:  # resolved once every entry has its Tangents id
                from_id = origin
                self.later.add(origin)
        return BranchSummary(from_id=from_id, summary=summary)

    def resolved(self, entry: Entry, states: dict[str, _State]) -> Entry:
        """``entry`` with a branch summary's origin later in the file translated."""
        payload = entry.payload
        if isinstance(payload, BranchSummary) and payload.from_id in self.later:
            return replace(entry, payload=replace(payload, from_id=states[payload.from_id].kept))
        return entry

    def label(
        self,
        data: dict[str, Any],
        record: _Record,
        states: dict[str, _State],
        by_id: dict[str, _Record],
    ) -> None:
        target = data.get("targetId")
        if self.fragment and isinstance(target, str) and target not in by_id:
            return  # labels an entry before the fragment
        if not isinstance(target, str) or target not in by_id:
            raise FormatError(record.line, f"targetId {target!r} points to no entry in the file")
        if target not in states:
            return  # labels an entry on another branch not yet placed; pi shows it the same way
        entry_id = states[target].kept
        if entry_id is None:
            return
        label = data.get("label")
        if isinstance(label, str) and label:
            self.labels[entry_id] = label
        else:
            self.labels.pop(entry_id, None)

    def restored(self, message: Message, record: _Record) -> Message:
        """``message`` as the Tangents export it came from had it (its
        ``tangents`` field), or as read when there is none."""
        fields = record.data.get(TANGENTS_FIELDS)
        if fields is None:
            return message
        if not isinstance(fields, dict):
            raise FormatError(record.line, f"{TANGENTS_FIELDS} must be an object")
        kept = {k: v for k, v in fields.items() if k not in ("pi", "rawArguments")}
        try:
            original = Message.from_dict({**kept, "role": message.role})
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise FormatError(record.line, f"malformed {TANGENTS_FIELDS} ({error})") from None
        meta = original.meta
        if fields.get("pi") and "pi" in message.meta:
            meta = {**meta, "pi": message.meta["pi"]}
        content = list(message.content)
        calls = [i for i, block in enumerate(content) if isinstance(block, ToolCallContent)]
        raw = fields.get("rawArguments", [])
        if (
            not isinstance(raw, list)
            or len(raw) != len(calls)
            or not all(isinstance(r, str) for r in raw)
        ):
            raise FormatError(
                record.line, f"{TANGENTS_FIELDS}.rawArguments must be one text a call"
            )
        for index, text in zip(calls, raw, strict=True):
            content[index] = replace(content[index], raw_arguments=text)
        return replace(original, content=tuple(content), meta=meta)

    def tangents_message(self, data: dict[str, Any], record: _Record) -> Message:
        """A message a Tangents export carried in a ``custom`` entry, with its
        images and files."""
        content = data.get("data")
        if not isinstance(content, dict) or not isinstance(content.get("message"), dict):
            raise FormatError(record.line, "a tangents custom entry needs data.message")
        images = content.get("images") or {}
        if not isinstance(images, dict):
            raise FormatError(record.line, "data.images must map sha256 to base64")
        for encoded in images.values():
            try:
                blob = image_blob(decode_base64(encoded))
            except ValueError as error:
                raise FormatError(record.line, f"data.images: {error}") from None
            self.blobs.setdefault(blob.sha256, blob)
        try:
            message = Message.from_dict(content["message"])
        except (KeyError, TypeError, ValueError) as error:
            raise FormatError(record.line, f"malformed tangents message ({error})") from None
        missing = [i.sha256[:12] for i in message.images if i.sha256 not in self.blobs]
        if missing:
            raise FormatError(record.line, f"image {missing[0]} has no bytes in the file")
        self.tangents_files(content.get("files") or {}, message, record)
        return message

    def tangents_files(self, files: Any, message: Message, record: _Record) -> None:
        """The bytes of the message's audio files and PDFs (``data.files``: sha256
        to base64), each checked as an attached file is and matching its block."""
        if not isinstance(files, dict):
            raise FormatError(record.line, "data.files must map sha256 to base64")
        for block in message.content:
            if not isinstance(block, FileContent):
                continue
            if block.sha256 not in files:
                raise FormatError(record.line, f"file {block.name!r} has no bytes in the file")
            try:
                blob, _ = attached(files[block.sha256], block.name)
            except ValueError as error:
                raise FormatError(record.line, f"data.files: {error}") from None
            if blob.sha256 != block.sha256:
                raise FormatError(record.line, f"file {block.name!r}: its bytes do not match")
            self.blobs.setdefault(blob.sha256, blob)

    @staticmethod
    def model_name(provider: Any, model: Any) -> str | None:
        if not isinstance(model, str) or not model:
            return None
        if isinstance(provider, str) and provider and not model.startswith(provider + "/"):
            return f"{provider}/{model}"
        return model

    # --- messages ------------------------------------------------------------

    def message(self, message: dict[str, Any], record: _Record) -> Message:
        role = message.get("role")
        extras: dict[str, Any] = {"id": record.data["id"]} if "id" in record.data else {}
        if role == "user":
            blocks = self.blocks(
                message.get("content"), record, ("text", "image"), extras, allow_string=True
            )
            return _with_meta(
                Message(role="user", content=tuple(blocks)), message, {"role", "content"}, extras
            )
        if role == "assistant":
            return self.assistant(message, record, extras)
        if role == "toolResult":
            call_id = message.get("toolCallId")
            if not isinstance(call_id, str) or not call_id:
                raise FormatError(record.line, "a toolResult needs a toolCallId")
            inner = self.blocks(
                message.get("content"), record, ("text", "image"), extras, allow_string=True
            )
            # blocks() was told to accept text and image blocks only
            block = ToolResultContent(call_id, tuple(inner), bool(message.get("isError", False)))  # type: ignore[arg-type]
            return _with_meta(
                Message(role="tool_result", content=(block,)),
                message,
                {"role", "content", "toolCallId", "isError"},
                extras,
            )
        if role == "bashExecution":
            return self.bash(message, record, extras)
        if role in ("custom", "hookMessage"):
            return self.custom_message(message, record, entry_type=False)
        raise FormatError(record.line, f"unknown message role {role!r}")

    def assistant(
        self, message: dict[str, Any], record: _Record, extras: dict[str, Any]
    ) -> Message:
        blocks = self.blocks(
            message.get("content"),
            record,
            ("text", "thinking", "toolCall"),
            extras,
            allow_string=True,
        )
        stop = message.get("stopReason")
        if stop is not None and _lookup(STOP_REASONS, stop) is None:
            raise FormatError(record.line, f"unknown stopReason {stop!r}")
        usage = message.get("usage")
        if isinstance(usage, dict):
            bad = _not_finite(usage) + [f"cost.{k}" for k in _not_finite(usage.get("cost"))]
            if bad:
                self.repairs.append(
                    f"line {record.line}: usage {', '.join(bad)} not a finite number; counted as 0"
                )
        error = message.get("errorMessage")
        provider = message.get("provider")
        return _with_meta(
            Message(
                role="assistant",
                content=tuple(blocks),
                model=self.model_name(provider, message.get("model")),
                provider=provider if isinstance(provider, str) else None,
                usage=_usage(usage) if isinstance(usage, dict) else None,
                stop_reason=STOP_REASONS[stop] if stop is not None else None,
                error=error if isinstance(error, str) else None,
            ),
            message,
            {"role", "content", "provider", "model", "usage", "stopReason", "errorMessage"},
            extras,
        )

    def bash(self, message: dict[str, Any], record: _Record, extras: dict[str, Any]) -> Message:
        command, output = message.get("command"), message.get("output", "")
        if not isinstance(command, str) or not isinstance(output, str):
            raise FormatError(record.line, "a bashExecution needs a command and its output")
        text = f"Ran `{command}`\n" + (f"```\n{output}\n```" if output else "(no output)")
        exit_code = message.get("exitCode")
        if message.get("cancelled"):
            text += "\n\n(command cancelled)"
        elif exit_code not in (None, 0):
            text += f"\n\nCommand exited with code {exit_code}"
        if message.get("truncated") and message.get("fullOutputPath"):
            text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
        extras["role"] = "bashExecution"
        if message.get("excludeFromContext"):
            base = Message(
                role="custom", content=(TextContent(text),), custom_type="bash_execution"
            )
        else:
            base = Message(role="user", content=(TextContent(text),))
        return _with_meta(base, message, {"role", "output"}, extras)

    def custom_message(self, data: dict[str, Any], record: _Record, *, entry_type: bool) -> Message:
        """An extension's message (entry or message role): pi sends it to the model as the user's."""
        extras: dict[str, Any] = {"id": record.data["id"]} if "id" in record.data else {}
        if entry_type:
            extras["type"] = "custom_message"
            known = {"type", "content", "id", "parentId", "timestamp"}
        else:
            extras["role"] = data.get("role")
            known = {"role", "content"}
        blocks = self.blocks(
            data.get("content"), record, ("text", "image"), extras, allow_string=True
        )
        return _with_meta(Message(role="user", content=tuple(blocks)), data, known, extras)

    def blocks(
        self,
        content: Any,
        record: _Record,
        allowed: tuple[str, ...],
        extras: dict[str, Any],
        *,
        allow_string: bool,
    ) -> list[Block]:
        if content is None:
            return []
        if isinstance(content, str) and allow_string:
            return [TextContent(content)]
        if not isinstance(content, list):
            raise FormatError(record.line, "message content must be a string or an array of blocks")
        out: list[Block] = []
        block_extras: dict[str, Any] = {}
        for index, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind not in allowed:
                raise FormatError(
                    record.line, f"content block {index + 1}: unknown or misplaced type {kind!r}"
                )
            converted, known = self.block(block, kind, record, index)
            out.append(converted)
            extra = {k: v for k, v in block.items() if k not in known}
            if extra:
                block_extras[str(index)] = extra
        if block_extras:
            extras["blocks"] = block_extras
        return out

    def block(
        self, block: dict[str, Any], kind: str, record: _Record, index: int
    ) -> tuple[Block, set[str]]:
        where = f"content block {index + 1}"
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise FormatError(record.line, f"{where}: text must be a string")
            return TextContent(block["text"]), {"type", "text"}
        if kind == "thinking":
            text, signature = block.get("thinking", ""), block.get("thinkingSignature")
            if not isinstance(text, str) or (
                signature is not None and not isinstance(signature, str)
            ):
                raise FormatError(
                    record.line, f"{where}: thinking and thinkingSignature must be strings"
                )
            return ThinkingContent(text, signature, bool(block.get("redacted", False))), {
                "type",
                "thinking",
                "thinkingSignature",
                "redacted",
            }
        if kind == "toolCall":
            call_id, name, arguments = (
                block.get("id"),
                block.get("name"),
                block.get("arguments", {}),
            )
            if not isinstance(call_id, str) or not isinstance(name, str) or not call_id or not name:
                raise FormatError(record.line, f"{where}: a toolCall needs an id and a name")
            if isinstance(arguments, str):
                raw = arguments
                arguments = tool_arguments(arguments, self.json_reader)
            elif isinstance(arguments, dict):
                raw = json.dumps(arguments, ensure_ascii=False)
            else:
                raise FormatError(record.line, f"{where}: toolCall arguments must be an object")
            return ToolCallContent(call_id, name, arguments, raw), {
                "type",
                "id",
                "name",
                "arguments",
            }
        # image
        media_type = block.get("mimeType")
        try:
            blob = image_blob(decode_base64(block.get("data")))
        except ValueError as error:
            raise FormatError(record.line, f"{where}: {error}") from None
        self.blobs.setdefault(blob.sha256, blob)
        known = {"type", "data", "mimeType"} if media_type == blob.media_type else {"type", "data"}
        return ImageContent(blob.media_type, blob.sha256, blob.width, blob.height), known


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _not_finite(data: Any) -> list[str]:
    """Keys of ``data`` (a dict of numbers) whose value is not a finite number."""
    if not isinstance(data, dict):
        return []
    return [k for k, v in data.items() if not isinstance(v, dict) and not _finite(v)]


def _lookup(table: Mapping[str, str], value: Any) -> str | None:
    return table.get(value) if isinstance(value, str) else None


def _with_meta(
    message: Message, source: dict[str, Any], known: set[str], extras: dict[str, Any]
) -> Message:
    kept = dict(extras)
    kept.update((k, v) for k, v in source.items() if k not in known)
    return message.with_(meta={"pi": kept}) if kept else message


def _usage(data: dict[str, Any]) -> Usage:
    cost: dict[str, Any] = data["cost"] if isinstance(data.get("cost"), dict) else {}

    def number(source: dict[str, Any], key: str) -> float:
        value = source.get(key, 0)
        return value if _finite(value) else 0

    return Usage(
        input_tokens=int(number(data, "input")),
        output_tokens=int(number(data, "output")),
        cache_read_tokens=int(number(data, "cacheRead")),
        cache_write_tokens=int(number(data, "cacheWrite")),
        reasoning_tokens=int(number(data, "reasoning")),
        input_cost=float(number(cost, "input")),
        output_cost=float(number(cost, "output")),
        cache_read_cost=float(number(cost, "cacheRead")),
        cache_write_cost=float(number(cost, "cacheWrite")),
    )


def _parent_first(records: list[_Record], by_id: dict[str, _Record]) -> list[_Record]:
    """Records with every parent before its children (pi writes them so; a file
    edited by hand may not). A cycle is a :class:`FormatError`."""
    done: set[str] = set()
    waiting: dict[str, list[_Record]] = {}
    out: list[_Record] = []
    for record in records:
        if record.parent is not None and record.parent not in done:
            waiting.setdefault(record.parent, []).append(record)
            continue
        stack = [record]
        while stack:
            current = stack.pop()
            out.append(current)
            done.add(current.id)
            stack.extend(reversed(waiting.pop(current.id, [])))
    if waiting:
        stuck = min((r for group in waiting.values() for r in group), key=lambda r: r.line)
        raise FormatError(stuck.line, f"parentId {stuck.parent!r} forms a cycle")
    return out
