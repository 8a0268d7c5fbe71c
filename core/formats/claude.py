"""Import of Claude Code project session files (``~/.claude/projects/*/ID.jsonl``).

Claude Code has no published schema; this follows the format as its files
show it (see tests/fixtures/claude/README.md). One JSON object a line:

- ``user`` / ``assistant`` lines carry ``uuid``, ``parentUuid`` (null at the
  start), ``isSidechain``, ``timestamp``, ``cwd`` and a ``message`` in the
  shape of Anthropic's Messages API: content a string or blocks ``text``,
  ``image`` (a base64 ``source``), ``document`` (a PDF as a base64
  ``source``, kept as an attachment), ``thinking`` (with its ``signature``),
  ``redacted_thinking``, ``tool_use`` and, in user lines, ``tool_result``.
  Claude Code writes one line per content block of a reply, each a child of
  the last, all with the reply's ``message.id``: such runs become one
  assistant message. A user line's tool results become a tool-result
  message (its text, if any, a user message after it).
- ``system`` lines (notices, ``compact_boundary``) become notes that are
  shown and never sent; a line whose ``parentUuid`` is null but names a
  ``logicalParentUuid`` hangs from that.
- A user line with ``isCompactSummary`` (the summary Claude Code goes on
  from after a ``compact_boundary``) becomes a compaction keeping nothing
  before it, with the boundary's ``preTokens``.
- ``summary`` lines (``summary``, ``leafUuid``) title the session.
- Sidechain (sub-agent) lines are kept as their own branch: a sidechain that
  starts without a parent in the file hangs from the main-chain entry
  written just before it. Any other line whose parent is not in the file
  starts the tree (a resumed session's first lines), with a note.
- Other line types (``file-history-snapshot``, ``queue-operation``...) are
  skipped and counted in the notes.

The leaf is the last main-chain (not sidechain) message of the file, where
Claude Code resumes. Every entry gets a fresh id; Claude Code's fields with
no Tangents equivalent are kept in ``meta["claude"]``. Claude Code records
tokens, not costs: replies are priced from litellm's table, with a note. A
line that is not JSON, or a message of the wrong shape, is a
:class:`FormatError` naming the line.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from core.formats.attached import attached
from core.formats.base import (
    FormatError,
    ImportedSession,
    JsonReader,
    decode_base64,
    parse_timestamp,
)
from core.providers.cost import cost_for, prices_for
from core.sessions.content import (
    Block,
    FileContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import Compaction, Entry
from core.sessions.ids import now_iso, uuid7
from core.sessions.images import image_blob
from core.sessions.messages import Message, StopReason, Usage
from core.sessions.persistence import Blob, SessionInfo
from core.sessions.session import derive_title

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
    "pause_turn": "stop",
    "refusal": "stop",
}
MESSAGE_LINES = ("user", "assistant", "system")
KEPT_FIELDS = ("isSidechain", "isMeta", "agentId", "requestId", "version", "gitBranch", "costUSD")
"""Line fields worth keeping in ``meta["claude"]`` (identity and provenance)."""


@dataclass
class _Line:
    number: int
    data: dict[str, Any]
    uuid: str
    parent: str | None
    sidechain: bool


@dataclass
class _Built:
    """The entries one line became (first and last; a user line may give two)."""

    first: Entry
    last: Entry
    message_id: str | None = None
    extra: list[Entry] = field(default_factory=list)


def from_claude_jsonl(text: str) -> ImportedSession:
    return _Importer(text).run()


class _Importer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.session_id = uuid7()
        self.blobs: dict[str, Blob] = {}
        self.summaries: list[tuple[str, str | None]] = []
        self.skipped: Counter[str] = Counter()
        self.dropped_blocks: Counter[str] = Counter()
        self.cwd: str | None = None
        self.last_created: str | None = None
        self.json_reader = JsonReader()
        self.tokens_before: dict[str, int] = {}
        """A compact boundary's uuid -> the tokens Claude Code had before it."""

    def run(self) -> ImportedSession:
        lines = self.read()
        known = {line.uuid for line in lines}
        lines = _parents_first(lines, known)
        entries: dict[str, Entry] = {}  # by id, in the order made; merged replies updated in place
        hang: dict[str, str | None] = {}  # a line's uuid -> the entry id its children hang from
        built: dict[str, _Built] = {}
        previous_main: str | None = None  # uuid of the last main-chain line placed
        cut = sidechains = 0
        for line in lines:
            parent_uuid = _parent_of(line, known)
            if parent_uuid is None and line.parent is not None:
                cut += 1  # its parent is in another file
            elif parent_uuid is None and line.sidechain and previous_main is not None:
                parent_uuid = previous_main  # a sub-agent's run starts from where it was called
                sidechains += 1
            parent_id = hang[parent_uuid] if parent_uuid is not None else None
            merged = self.merge(line, built.get(parent_uuid) if parent_uuid else None, entries)
            if merged is not None:
                built[line.uuid] = merged
                hang[line.uuid] = merged.last.id
                continue
            result = self.convert(line, parent_id)
            if result is None:
                hang[line.uuid] = parent_id
                continue
            for entry in (result.first, *result.extra):
                entries[entry.id] = entry
            built[line.uuid] = result
            hang[line.uuid] = result.last.id
            if not line.sidechain:
                previous_main = line.uuid
        if not entries:
            raise FormatError(None, "the file holds no messages to import")
        main = [line for line in lines if not line.sidechain and line.uuid in built]
        last = max(main, key=lambda line: line.number) if main else None
        leaf = built[last.uuid].last.id if last else next(reversed(entries))
        # Lines were taken parents first, so the entries are in that order too.
        return self.session(list(entries.values()), leaf, cut, sidechains)

    # --- reading ---------------------------------------------------------------

    def read(self) -> list[_Line]:
        lines: list[_Line] = []
        seen: dict[str, int] = {}
        for number, data in self.json_reader.objects(self.text):
            kind = data.get("type")
            if kind == "summary":
                summary = data.get("summary")
                if isinstance(summary, str) and summary.strip():
                    leaf = data.get("leafUuid")
                    self.summaries.append((summary, leaf if isinstance(leaf, str) else None))
                continue
            if kind not in MESSAGE_LINES:
                self.skipped[kind if isinstance(kind, str) else "(no type)"] += 1
                continue
            uuid, parent = data.get("uuid"), data.get("parentUuid")
            if not isinstance(uuid, str) or not uuid:
                raise FormatError(number, f"a {kind} line needs a uuid")
            if parent is not None and not isinstance(parent, str):
                raise FormatError(number, "parentUuid must be a string or null")
            if uuid in seen:
                raise FormatError(number, f"duplicate uuid {uuid!r} (first on line {seen[uuid]})")
            seen[uuid] = number
            if self.cwd is None and isinstance(data.get("cwd"), str):
                self.cwd = data["cwd"]
            lines.append(_Line(number, data, uuid, parent, data.get("isSidechain") is True))
        return lines

    # --- converting --------------------------------------------------------------

    def merge(self, line: _Line, before: _Built | None, entries: dict[str, Entry]) -> _Built | None:
        """A reply's later line joins the entry of its parent line (same ``message.id``)."""
        message = line.data.get("message")
        if line.data.get("type") != "assistant" or before is None or not isinstance(message, dict):
            return None
        message_id = message.get("id")
        if not message_id or before.message_id != message_id or before.extra:
            return None
        addition = self.assistant(line, message)
        self.timestamp(line)  # checked, though the reply keeps its first line's time
        entry = entries[before.last.id]
        joined = entry.message
        assert joined is not None
        merged = joined.with_(
            content=joined.content + addition.content,
            usage=addition.usage or joined.usage,
            stop_reason=addition.stop_reason or joined.stop_reason,
            meta=_merge_meta(joined.meta, line.uuid),
        )
        entries[entry.id] = replace(entry, payload=merged)
        return _Built(entries[entry.id], entries[entry.id], message_id)

    def convert(self, line: _Line, parent_id: str | None) -> _Built | None:
        data, kind = line.data, line.data["type"]
        created = self.timestamp(line)
        if kind == "system":
            text = data.get("content")
            if not isinstance(text, str) or not text.strip():
                subtype = data.get("subtype")
                text = f"({subtype})" if isinstance(subtype, str) else None
            if text is None:
                self.skipped["system (empty)"] += 1
                return None
            compacted = data.get("compactMetadata")
            if isinstance(compacted, dict):
                self.tokens_before[line.uuid] = _count(compacted.get("preTokens"))
            note = Message(
                role="custom",
                content=(TextContent(text),),
                custom_type="claude_" + str(data.get("subtype") or "system"),
                meta=self.meta(line),
            )
            entry = Entry(uuid7(), parent_id, self.session_id, "message", created, note)
            return _Built(entry, entry)
        message = data.get("message")
        if not isinstance(message, dict):
            raise FormatError(line.number, f"a {kind} line needs a message object")
        if kind == "assistant":
            reply = self.assistant(line, message).with_(meta=self.meta(line))
            entry = Entry(uuid7(), parent_id, self.session_id, "message", created, reply)
            message_id = message.get("id") if isinstance(message.get("id"), str) else None
            return _Built(entry, entry, message_id)
        results, blocks = self.user_blocks(line, message.get("content"))
        if data.get("isCompactSummary") is True and blocks and not results:
            summary = "\n".join(b.text for b in blocks if isinstance(b, TextContent))
            tokens = self.tokens_before.get(line.parent or "", 0)
            # Nothing before it is kept: Claude Code goes on from the summary alone.
            compaction = Compaction(summary, None, tokens, {"claude": self.meta(line)})
            entry = Entry(uuid7(), parent_id, self.session_id, "compaction", created, compaction)
            return _Built(entry, entry)
        if not results and not blocks:
            self.skipped["user (empty)"] += 1
            return None
        made: list[Entry] = []
        if results:
            answer = Message(role="tool_result", content=tuple(results), meta=self.meta(line))
            made.append(Entry(uuid7(), parent_id, self.session_id, "message", created, answer))
        if blocks:
            user = Message(role="user", content=tuple(blocks), meta=self.meta(line))
            above = made[-1].id if made else parent_id
            made.append(Entry(uuid7(), above, self.session_id, "message", created, user))
        return _Built(made[0], made[-1], None, made[1:])

    def assistant(self, line: _Line, message: dict[str, Any]) -> Message:
        content = message.get("content")
        blocks: list[Block] = []
        for index, block in self.block_list(line, content):
            kind = block.get("type")
            where = f"content block {index + 1}"
            if kind == "text":
                blocks.append(TextContent(self.string(block, "text", line, where)))
            elif kind == "thinking":
                signature = block.get("signature")
                if signature is not None and not isinstance(signature, str):
                    raise FormatError(line.number, f"{where}: signature must be a string")
                blocks.append(
                    ThinkingContent(self.string(block, "thinking", line, where), signature or None)
                )
            elif kind == "redacted_thinking":
                blocks.append(ThinkingContent("", self.string(block, "data", line, where), True))
            elif kind in ("tool_use", "server_tool_use"):
                call_id, name = block.get("id"), block.get("name")
                arguments = block.get("input", {})
                if not isinstance(call_id, str) or not isinstance(name, str) or not call_id:
                    raise FormatError(line.number, f"{where}: a tool_use needs an id and a name")
                if not isinstance(arguments, dict):
                    raise FormatError(line.number, f"{where}: tool_use input must be an object")
                raw = json.dumps(arguments, ensure_ascii=False)
                blocks.append(ToolCallContent(call_id, name, arguments, raw))
            else:
                self.dropped_blocks[str(kind)] += 1
        model = message.get("model")
        usage = message.get("usage")
        stop = message.get("stop_reason")
        error = None
        if line.data.get("isApiErrorMessage"):
            error = "\n".join(b.text for b in blocks if isinstance(b, TextContent)) or "API error"
        named = model if isinstance(model, str) and model and not model.startswith("<") else None
        return Message(
            role="assistant",
            content=tuple(blocks),
            model=(named if "/" in named else f"anthropic/{named}") if named else None,
            provider="anthropic" if named else None,
            usage=_usage(usage) if isinstance(usage, dict) else None,
            stop_reason="error"
            if error
            else STOP_REASONS.get(stop)
            if isinstance(stop, str)
            else None,
            error=error,
        )

    def user_blocks(
        self, line: _Line, content: Any
    ) -> tuple[list[ToolResultContent], list[TextContent | ImageContent | FileContent]]:
        if isinstance(content, str):
            return [], [TextContent(content)] if content else []
        results: list[ToolResultContent] = []
        blocks: list[TextContent | ImageContent | FileContent] = []
        for index, block in self.block_list(line, content):
            kind = block.get("type")
            where = f"content block {index + 1}"
            if kind == "text":
                blocks.append(TextContent(self.string(block, "text", line, where)))
            elif kind == "image":
                blocks.append(self.image(block, line, where))
            elif kind == "document":
                blocks.append(self.document(block, line, where))
            elif kind == "tool_result":
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str) or not call_id:
                    raise FormatError(line.number, f"{where}: a tool_result needs a tool_use_id")
                inner = block.get("content")
                parts: list[TextContent | ImageContent] = []
                if isinstance(inner, str):
                    parts.append(TextContent(inner))
                elif inner is not None:
                    for sub, part in self.block_list(line, inner):
                        sub_where = f"{where}, part {sub + 1}"
                        if part.get("type") == "text":
                            parts.append(TextContent(self.string(part, "text", line, sub_where)))
                        elif part.get("type") == "image":
                            parts.append(self.image(part, line, sub_where))
                        elif part.get("type") == "document":
                            # A tool result holds text and images: the document
                            # the tool read goes in the user message after it.
                            blocks.append(self.document(part, line, sub_where))
                        else:
                            self.dropped_blocks[str(part.get("type"))] += 1
                results.append(
                    ToolResultContent(call_id, tuple(parts), block.get("is_error") is True)
                )
            else:
                self.dropped_blocks[str(kind)] += 1
        return results, blocks

    def block_list(self, line: _Line, content: Any) -> list[tuple[int, dict[str, Any]]]:
        if content is None:
            return []
        if isinstance(content, str):
            return [(0, {"type": "text", "text": content})]
        if not isinstance(content, list):
            raise FormatError(line.number, "message content must be a string or a list of blocks")
        out = []
        for index, block in enumerate(content):
            if not isinstance(block, dict):
                raise FormatError(line.number, f"content block {index + 1}: expected an object")
            out.append((index, block))
        return out

    def image(self, block: dict[str, Any], line: _Line, where: str) -> TextContent | ImageContent:
        source = block.get("source")
        if not isinstance(source, dict):
            raise FormatError(line.number, f"{where}: an image needs a source")
        if source.get("type") != "base64":
            self.dropped_blocks["image (not base64)"] += 1
            return TextContent(f"[image: {source.get('url') or source.get('type')}]")
        try:
            blob = image_blob(decode_base64(source.get("data")))
        except ValueError as error:
            raise FormatError(line.number, f"{where}: {error}") from None
        self.blobs.setdefault(blob.sha256, blob)
        return ImageContent(blob.media_type, blob.sha256, blob.width, blob.height)

    def document(
        self, block: dict[str, Any], line: _Line, where: str
    ) -> TextContent | ImageContent | FileContent:
        """A ``document`` block: base64 bytes (a PDF) kept as an attachment
        named by its ``title``, plain text as text, a URL as a note."""
        source = block.get("source")
        if not isinstance(source, dict):
            raise FormatError(line.number, f"{where}: a document needs a source")
        title = block.get("title")
        name = title if isinstance(title, str) and title else "document.pdf"
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return TextContent(source["data"])
        if source.get("type") != "base64":
            self.dropped_blocks["document (not base64)"] += 1
            return TextContent(f"[document: {source.get('url') or source.get('type')}]")
        try:
            blob, content = attached(source.get("data"), name)
        except ValueError as error:
            raise FormatError(line.number, f"{where}: {error}") from None
        self.blobs.setdefault(blob.sha256, blob)
        return content

    @staticmethod
    def string(block: dict[str, Any], key: str, line: _Line, where: str) -> str:
        value = block.get(key)
        if not isinstance(value, str):
            raise FormatError(line.number, f"{where}: {key} must be a string")
        return value

    def meta(self, line: _Line) -> dict[str, Any]:
        kept = {"uuid": line.uuid}
        kept.update((k, line.data[k]) for k in KEPT_FIELDS if k in line.data)
        return {"claude": kept}

    def timestamp(self, line: _Line) -> str:
        value = line.data.get("timestamp")
        if value is None:
            return self.last_created or now_iso()
        parsed = parse_timestamp(value)
        if parsed is None:
            raise FormatError(line.number, f"bad timestamp {value!r}")
        self.last_created = parsed
        return parsed

    # --- the session -------------------------------------------------------------

    def session(
        self, entries: list[Entry], leaf: str, cut: int, sidechains: int
    ) -> ImportedSession:
        entries, priced = _priced(entries)
        notes = self.json_reader.notes()
        if sidechains:
            notes.append(
                f"kept {sidechains} sub-agent (sidechain) run{'s' if sidechains != 1 else ''}"
                " as branches from where they started"
            )
        if cut:
            notes.append(
                f"{cut} line{'s' if cut != 1 else ''} named a parent that is not in the file"
                " (a resumed session?): they start the tree"
            )
        if self.skipped:
            total = sum(self.skipped.values())
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items()))
            notes.append(f"skipped {total} line{'s' if total != 1 else ''} ({kinds})")
        if self.dropped_blocks:
            total = sum(self.dropped_blocks.values())
            kinds = ", ".join(sorted(self.dropped_blocks))
            notes.append(f"left out {total} content block{'s' if total != 1 else ''} ({kinds})")
        if priced:
            notes.append(
                f"priced {priced} repl{'ies' if priced != 1 else 'y'} from litellm's price table"
                " (Claude Code records tokens, not costs)"
            )
        ids = {e.message.meta.get("claude", {}).get("uuid") for e in entries if e.message}
        title = next((s for s, leaf_uuid in self.summaries if leaf_uuid in ids), None)
        if title is None and self.summaries:
            title = self.summaries[-1][0]
        first_user = next(
            (e.message.text for e in entries if e.message is not None and e.message.role == "user"),
            "",
        )
        created = min(e.created_at for e in entries)
        info = SessionInfo(
            id=self.session_id,
            title=" ".join(title.split()) if title else derive_title(first_user),
            created_at=created,
            updated_at=max(e.created_at for e in entries),
            leaf_id=leaf,
            title_set_by_user=title is not None,
            cwd=self.cwd,
        )
        return ImportedSession(
            "claude", info, tuple(entries), {}, tuple(self.blobs.values()), tuple(notes)
        )


def _parent_of(line: _Line, known: set[str]) -> str | None:
    """The line a line hangs from, if it is in the file."""
    if line.parent in known:
        return line.parent
    logical = line.data.get("logicalParentUuid")
    return (
        logical if line.parent is None and isinstance(logical, str) and logical in known else None
    )


def _parents_first(lines: list[_Line], known: set[str]) -> list[_Line]:
    """The lines with every parent before its children, in file order otherwise
    (Claude Code appends them so; a file put together by hand may not)."""
    placed: set[str] = set()
    waiting: dict[str, list[_Line]] = {}
    out: list[_Line] = []
    for line in lines:
        parent = _parent_of(line, known)
        if parent is not None and parent not in placed:
            waiting.setdefault(parent, []).append(line)
            continue
        stack = [line]
        while stack:
            current = stack.pop()
            out.append(current)
            placed.add(current.uuid)
            stack.extend(reversed(waiting.pop(current.uuid, [])))
    if waiting:
        stuck = min(
            (line for group in waiting.values() for line in group), key=lambda each: each.number
        )
        raise FormatError(stuck.number, f"parentUuid {stuck.parent!r} forms a cycle")
    return out


def _merge_meta(meta: dict[str, Any], uuid: str) -> dict[str, Any]:
    claude = dict(meta.get("claude", {}))
    claude["merged_uuids"] = [*claude.get("merged_uuids", []), uuid]
    return {**meta, "claude": claude}


def _priced(entries: list[Entry]) -> tuple[list[Entry], int]:
    """``entries`` with each reply's cost from litellm's price table, as
    Tangents prices its own replies, and how many were priced."""
    out, priced = [], 0
    for entry in entries:
        message = entry.message
        if message and message.usage and message.model and prices_for(message.model):
            usage = cost_for(message.model, message.usage)
            entry = replace(entry, payload=message.with_(usage=usage))
            priced += 1
        out.append(entry)
    return out, priced


def _count(value: Any) -> int:
    """A token count, 0 when it is not a sane number."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
    return int(value) if ok and abs(value) < 1e18 else 0


def _usage(data: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=_count(data.get("input_tokens")),
        output_tokens=_count(data.get("output_tokens")),
        cache_read_tokens=_count(data.get("cache_read_input_tokens")),
        cache_write_tokens=_count(data.get("cache_creation_input_tokens")),
    )
