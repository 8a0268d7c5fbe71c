"""OpenAI chat-completions ``messages``: export of the current branch, import
of a conversation as a linear session.

Export is the ``messages`` array the next request on the branch would send,
built by the same context builder and conversion as the request (and, from
the command line, fitted to the model's window as the request is: big
messages shortened with a marker, see :mod:`core.sessions.context_fit`): the system
prompt first, a compaction's summary (as the user message the model sees) in
place of what it replaced, branch summaries as the model sees them, custom
notes, model changes and thinking left out, unfinished tool calls answered,
consecutive roles as they are sent. Images within the image budget go as data
URLs (as sent) when their bytes are at hand; older ones as the note the model
gets. Images a tool returned follow its tool messages in one user message
(tool messages hold only text). A tool error's text starts with ``Error:``.

Import takes an array of messages (or an object with a ``messages`` array,
like a request body) and chains them: ``system``/``developer``, ``user``,
``assistant`` (text, ``tool_calls``, ``reasoning_content`` as thinking) and
``tool`` (each must answer an earlier tool call). A user message that is a
compaction's or a branch's summary as exported becomes that entry again (and
never the session's title). Data-URL images are stored; remote image URLs
become a text note; ``input_audio`` and ``file`` parts with their bytes are
kept as attachments (a ``file_id`` alone becomes a note). Fields Tangents has no place for are kept in the
message's ``meta["openai"]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.formats.attached import attached, attached_data_url
from core.formats.base import (
    FormatError,
    ImportedSession,
    JsonReader,
    data_url_blob,
    json_error,
    line_of,
    tool_arguments,
)
from core.providers.openai_format import convert
from core.sessions.content import (
    Block,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.context import (
    BRANCH_END,
    BRANCH_PREFIX,
    SUMMARY_END,
    SUMMARY_PREFIX,
    Context,
    build_context,
)
from core.sessions.entries import BranchSummary, Compaction, Entry
from core.sessions.ids import uuid7
from core.sessions.messages import Message
from core.sessions.persistence import Blob, SessionInfo
from core.sessions.session import derive_title

# --- export -----------------------------------------------------------------


def to_openai_messages(
    path: Sequence[Entry], blobs: Mapping[str, Blob] | None = None, *, image_budget: int = 3
) -> list[dict[str, Any]]:
    """What the next request on the branch ending at the path's last entry sends.

    ``blobs`` maps an image's sha256 to its blob; images without bytes become
    a text note.
    """
    return context_to_openai(build_context(path, "", image_budget=image_budget), blobs)


def context_to_openai(
    context: Context, blobs: Mapping[str, Blob] | None = None
) -> list[dict[str, Any]]:
    """The ``messages`` of a request sending ``context`` (a conversation's
    :meth:`~core.chat.conversation.Conversation.next_context`: fitted to the
    model's window as the request is)."""
    images = {sha: blob.data for sha, blob in (blobs or {}).items()}
    system = [{"role": "system", "content": context.system}] if context.system else []
    return system + convert(context.messages, images, raw_arguments=True)


# --- import -----------------------------------------------------------------

_KNOWN = {
    "system": {"role", "content"},
    "developer": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls", "reasoning_content"},
    "tool": {"role", "content", "tool_call_id"},
}


def from_openai_text(text: str) -> ImportedSession:
    json_reader = JsonReader()
    try:
        document = json_reader.load(text)
    except json.JSONDecodeError as error:
        raise json_error(error, text) from None
    return from_openai_messages(document, text, json_reader)


def from_openai_messages(
    document: Any, text: str | None = None, json_reader: JsonReader | None = None
) -> ImportedSession:
    """A linear session from a ``messages`` array (or an object holding one).
    ``text`` (the JSON it came from) lets errors name their line; ``json_reader``
    (what read it) parses tool arguments and has its notes added."""
    prefix: list[str | int] = []
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        prefix, document = ["messages"], document["messages"]
    if not isinstance(document, list):
        raise FormatError(1, "expected an array of chat-completions messages")
    if not document:
        raise FormatError(1, "the conversation holds no messages")
    json_reader = json_reader or JsonReader()
    reader = _Reader(text, prefix, json_reader)
    session_id = uuid7()
    entries: list[Entry] = []
    blobs: dict[str, Blob] = {}
    for index, item in enumerate(document):
        try:
            message = reader.message(item, index, blobs)
        except (TypeError, ValueError, AttributeError) as error:  # a value of an unexpected shape
            raise reader.fail(index, f"malformed message ({error})") from None
        for payload in _summaries_of(message):
            parent = entries[-1].id if entries else None
            entries.append(Entry.new(session_id, parent, payload))
    first_user = next(
        (e.message.text for e in entries if e.message is not None and e.message.role == "user"), ""
    )
    info = SessionInfo(
        id=session_id,
        title=derive_title(first_user),
        created_at=entries[0].created_at,
        updated_at=entries[-1].created_at,
        leaf_id=entries[-1].id,
    )
    return ImportedSession(
        "openai", info, tuple(entries), {}, tuple(blobs.values()), tuple(json_reader.notes())
    )


def _summaries_of(message: Message) -> list[Message | Compaction | BranchSummary]:
    """The compaction and branch summaries an exported user message starts
    with (a summary shares its message with what followed it), then the rest
    of the message, if any."""
    if message.role != "user":
        return [message]
    found: list[Message | Compaction | BranchSummary] = []
    blocks = list(message.content)
    while blocks and isinstance(blocks[0], TextContent):
        text = blocks[0].text
        if text.startswith(SUMMARY_PREFIX):
            summary, rest = _summary_text(text, SUMMARY_PREFIX, SUMMARY_END)
            found.append(Compaction(summary, None))
        elif text.startswith(BRANCH_PREFIX):
            summary, rest = _summary_text(text, BRANCH_PREFIX, BRANCH_END)
            found.append(BranchSummary(None, summary))
        else:
            break
        blocks[:1] = [TextContent(rest)] if rest else []
    if not found:
        return [message]
    return found + ([message.with_(content=tuple(blocks))] if blocks else [])


def _summary_text(text: str, prefix: str, end: str) -> tuple[str, str | None]:
    """The summary and what follows it in ``text``. An export made before
    summaries had an end marker holds the summary alone."""
    body = text[len(prefix) :]
    summary, marked, rest = body.partition(end)
    if not marked:
        return body, None
    return summary, rest.lstrip("\n") or None


class _Reader:
    def __init__(self, text: str | None, prefix: list[str | int], json_reader: JsonReader) -> None:
        self.text = text
        self.prefix = prefix
        self.json_reader = json_reader
        self.calls: set[str] = set()

    def fail(self, index: int, reason: str) -> FormatError:
        line = line_of(self.text, self.prefix + [index]) if self.text is not None else None
        return FormatError(line, f"message {index + 1}: {reason}")

    def message(self, item: Any, index: int, blobs: dict[str, Blob]) -> Message:
        if not isinstance(item, dict):
            raise self.fail(index, "must be an object")
        role = item.get("role")
        if role not in _KNOWN:
            raise self.fail(
                index,
                f"unknown role {role!r}"
                + (" (legacy function messages are not supported)" if role == "function" else ""),
            )
        if "function_call" in item:
            raise self.fail(index, "legacy function_call is not supported; use tool_calls")
        extra = {
            k: v
            for k, v in item.items()
            if k not in _KNOWN[role] or (k == "role" and v == "developer")
        }
        meta = {"openai": extra} if extra else {}
        if role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise self.fail(index, "a tool message needs a tool_call_id")
            if call_id not in self.calls:
                raise self.fail(index, f"tool_call_id {call_id!r} answers no earlier tool call")
            inner = self.content(item.get("content"), index, blobs, images=False)
            return Message(
                role="tool_result", content=(ToolResultContent(call_id, tuple(inner)),), meta=meta
            )
        if role == "assistant":
            return self.assistant(item, index, blobs, meta)
        blocks = self.content(item.get("content"), index, blobs, images=role == "user")
        return Message(
            role="system" if role == "developer" else role, content=tuple(blocks), meta=meta
        )

    def assistant(
        self, item: dict[str, Any], index: int, blobs: dict[str, Blob], meta: dict[str, Any]
    ) -> Message:
        blocks: list[Block] = []
        reasoning = item.get("reasoning_content")
        if reasoning is not None:
            if not isinstance(reasoning, str):
                raise self.fail(index, "reasoning_content must be a string")
            blocks.append(ThinkingContent(reasoning))
        blocks += self.content(item.get("content"), index, blobs, images=False)
        calls = item.get("tool_calls") or []
        if not isinstance(calls, list):
            raise self.fail(index, "tool_calls must be an array")
        for number, call in enumerate(calls, 1):
            blocks.append(self.tool_call(call, index, number))
        return Message(role="assistant", content=tuple(blocks), meta=meta)

    def tool_call(self, call: Any, index: int, number: int) -> ToolCallContent:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise self.fail(index, f"tool call {number} needs a function object")
        call_id, name, raw = call.get("id"), function.get("name"), function.get("arguments", "")
        if not isinstance(call_id, str) or not call_id:
            raise self.fail(index, f"tool call {number} needs an id")
        if not isinstance(name, str) or not name:
            raise self.fail(index, f"tool call {number} needs a function name")
        if isinstance(raw, dict):
            raw = json.dumps(raw, ensure_ascii=False)
        if not isinstance(raw, str):
            raise self.fail(index, f"tool call {number}: arguments must be a JSON string")
        self.calls.add(call_id)
        return ToolCallContent(call_id, name, tool_arguments(raw, self.json_reader), raw)

    def content(
        self, content: Any, index: int, blobs: dict[str, Blob], *, images: bool
    ) -> list[Any]:
        """The blocks of one message's ``content`` (text, images, audio, files)."""
        if content is None:
            return []
        if isinstance(content, str):
            return [TextContent(content)] if content else []
        if not isinstance(content, list):
            raise self.fail(index, "content must be a string, an array of parts or null")
        blocks: list[Block] = []
        for number, part in enumerate(content, 1):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                blocks.append(TextContent(part["text"]))
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                blocks.append(TextContent(part["refusal"]))
            elif kind == "image_url":
                blocks.append(self.image(part, index, number, blobs, images))
            elif kind in ("input_audio", "file"):
                if not images:
                    raise self.fail(
                        index, f"content part {number}: files are only supported in user messages"
                    )
                blocks.append(self.file(part, kind, index, number, blobs))
            else:
                raise self.fail(index, f"content part {number}: unsupported type {kind!r}")
        return blocks

    def image(
        self, part: dict[str, Any], index: int, number: int, blobs: dict[str, Blob], allowed: bool
    ) -> Block:
        image_url = part.get("image_url")
        url = image_url.get("url") if isinstance(image_url, dict) else image_url
        if not isinstance(url, str):
            raise self.fail(index, f"content part {number}: image_url needs a url")
        if not url.startswith("data:"):
            return TextContent(f"[image: {url}]")
        if not allowed:
            raise self.fail(
                index, f"content part {number}: images are only supported in user messages"
            )
        try:
            blob = data_url_blob(url)
        except ValueError as error:
            raise self.fail(index, f"content part {number}: {error}") from None
        blobs.setdefault(blob.sha256, blob)
        return ImageContent(blob.media_type, blob.sha256, blob.width, blob.height)

    def file(
        self, part: dict[str, Any], kind: str, index: int, number: int, blobs: dict[str, Blob]
    ) -> Block:
        """An ``input_audio`` part (base64 ``data`` and its ``format``) or a
        ``file`` part (``file_data`` as a data URL, ``filename``); a file
        known only by its ``file_id`` on the server becomes a note."""
        inner = part.get(kind)
        if not isinstance(inner, dict):
            raise self.fail(index, f"content part {number}: {kind} must be an object")
        try:
            if kind == "input_audio":
                audio_format = inner.get("format")
                name = f"audio.{audio_format}" if isinstance(audio_format, str) else "audio"
                blob, block = attached(inner.get("data"), name)
            else:
                filename = inner.get("filename")
                name = filename if isinstance(filename, str) and filename else "file"
                data = inner.get("file_data")
                if not isinstance(data, str):
                    return TextContent(f"[file: {inner.get('file_id') or name}]")
                blob, block = attached_data_url(data, name)
        except ValueError as error:
            raise self.fail(index, f"content part {number}: {error}") from None
        blobs.setdefault(blob.sha256, blob)
        return block
