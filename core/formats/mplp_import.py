"""MPLP dialog import: a dialog document (``mplp-dialog.schema.json``) becomes
a linear session.

The document is validated against the schema (shipped in
``core/formats/schemas/mplp``) before anything else; an invalid one is
refused with the first problem and its place. Then, message by message:

- ``user``, ``assistant`` and ``system`` keep their role;
- ``agent`` messages that begin with ``[Name] `` are a named agent's replies
  (MPLP 5.2): assistant messages whose ``agent`` is ``Name``, the prefix
  taken off; other ``agent`` messages (a tool's output, a note, as the
  Tangents export writes them) become custom messages, shown and never sent;
- what a Tangents export put in a message's ``event.data`` (model, stop
  reason) is read back where it fits.

The dialog's ``status`` becomes the session's; its title comes from the
``dialog.started`` event a Tangents export writes, else from the first
user message.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.formats.base import FormatError, ImportedSession, JsonReader, json_error, line_of
from core.sessions.content import TextContent
from core.sessions.entries import Entry
from core.sessions.ids import uuid7
from core.sessions.messages import STOP_REASONS, Message
from core.sessions.persistence import SessionInfo
from core.sessions.session import derive_title

SCHEMAS = Path(__file__).parent / "schemas" / "mplp"
AGENT_PREFIX = re.compile(r"\[([^\[\]\n]{1,64})\] ")
"""``[Name] `` before an agent's words."""
CUSTOM_TYPE = "mplp-agent"
"""``custom_type`` of an ``agent`` message that names no agent."""


def is_mplp_dialog(document: Any) -> bool:
    """Whether a parsed JSON document looks like an MPLP dialog (not checked yet)."""
    return isinstance(document, dict) and "dialog_id" in document and "messages" in document


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft7Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT7

    resources = []
    for path in sorted(SCHEMAS.rglob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema, DRAFT7)))
    dialog = json.loads((SCHEMAS / "mplp-dialog.schema.json").read_text(encoding="utf-8"))
    return Draft7Validator(dialog, registry=Registry().with_resources(resources))


def from_mplp_text(text: str) -> ImportedSession:
    try:
        document = JsonReader().load(text)
    except json.JSONDecodeError as error:
        raise json_error(error, text) from None
    return from_mplp_dialog(document, text)


def from_mplp_dialog(document: Any, text: str | None = None) -> ImportedSession:
    """The session an MPLP dialog holds; :class:`FormatError` (nothing made)
    if it is not valid against the schema or holds no message."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(document))
    if error is not None:
        where = list(error.absolute_path)
        line = line_of(text, where) if text is not None else None
        place = "/".join(map(str, where)) or "the document"
        raise FormatError(line, f"not a valid MPLP dialog: {place}: {error.message[:200]}")
    if not document["messages"]:
        raise FormatError(None, "the dialog holds no messages")
    session_id = uuid7()
    entries: list[Entry] = []
    for item in document["messages"]:
        parent = entries[-1].id if entries else None
        entries.append(Entry.new(session_id, parent, _message(item)))
    first_user = next(
        (e.message.text for e in entries if e.message is not None and e.message.role == "user"), ""
    )
    title = _started(document).get("title")
    info = SessionInfo(
        id=session_id,
        title=title if isinstance(title, str) and title.strip() else derive_title(first_user),
        created_at=entries[0].created_at,
        updated_at=entries[-1].created_at,
        leaf_id=entries[-1].id,
        status=document["status"],
    )
    return ImportedSession("mplp", info, tuple(entries))


def _started(document: dict[str, Any]) -> dict[str, Any]:
    for event in document.get("events") or ():
        if event.get("event_type") == "dialog.started" and isinstance(event.get("data"), dict):
            return event["data"]
    return {}


def _message(item: dict[str, Any]) -> Message:
    role, content = item["role"], item["content"]
    data = (item.get("event") or {}).get("data")
    data = data if isinstance(data, dict) else {}
    if role == "agent":
        named = AGENT_PREFIX.match(content)
        if named is None:
            return Message(role="custom", content=(TextContent(content),), custom_type=CUSTOM_TYPE)
        return _assistant(content[named.end() :], data, named.group(1))
    if role == "assistant":
        return _assistant(content, data, None)
    return Message(role=role, content=(TextContent(content),))


def _assistant(text: str, data: dict[str, Any], agent: str | None) -> Message:
    """An assistant message, its agent (when named) a field of its payload."""
    payload: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    for key in ("model", "provider"):
        if isinstance(data.get(key), str):
            payload[key] = data[key]
    if data.get("stop_reason") in STOP_REASONS:
        payload["stop_reason"] = data["stop_reason"]
    if agent is not None:
        payload["agent"] = agent
    return Message.from_dict(payload)
