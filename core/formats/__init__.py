"""Session formats: pure conversions between a session and files.

Exports (a session in, text out): Markdown and Tangents JSON
(:mod:`core.formats.markdown`, :mod:`core.formats.tangents_json`), OpenAI
chat-completions messages (:mod:`core.formats.openai`) and MPLP dialogs
(:mod:`core.formats.mplp`).

Imports (text in, an :class:`ImportedSession` out, nothing written): Tangents
JSON, OpenAI ``messages`` arrays, pi session files (:mod:`core.formats.pi`),
Claude Code session files (:mod:`core.formats.claude`) and MPLP dialogs
(:mod:`core.formats.mplp_import`). Exports of the
whole tree to pi: :mod:`core.formats.pi_export`.
A file that cannot be imported whole raises :class:`FormatError` naming the
line and the reason; the caller writes an imported session in one
transaction (``SessionStore.import_session``), so nothing is half imported.
"""

from __future__ import annotations

import json

from core.formats.base import FormatError, ImportedSession
from core.formats.mplp_import import is_mplp_dialog

IMPORT_FORMATS = ("tangents", "openai", "pi", "claude", "mplp")

__all__ = ["FormatError", "IMPORT_FORMATS", "ImportedSession", "detect_format", "parse_import"]


SNIFF_LINES = 20
"""How many JSON lines detection looks at (Claude Code files may start with
bookkeeping lines before the first message)."""


CLAUDE_ONLY = ("summary", "file-history-snapshot", "queue-operation")
"""Line types of Claude Code that pi does not write."""


def detect_format(text: str) -> str:
    """``tangents``, ``openai``, ``pi``, ``claude`` or ``mplp``, guessed from the content.

    JSON lines are recognised first: a pi file starts with a ``session``
    header (a fragment without one, with entries that have a ``type``); a
    Claude Code file's lines carry ``uuid`` / ``parentUuid`` (its first lines
    may be a ``summary`` or ``file-history-snapshot``). Otherwise the text is
    one JSON document: an MPLP dialog has ``dialog_id`` and ``messages``; a
    Tangents export is an object with ``"format": "tangents-session"``; an
    OpenAI conversation is an array of messages (or an object holding one
    under ``messages``).
    """
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "openai"
    lines = _first_objects(stripped)
    if lines:
        line = lines[0]
        if line.get("type") == "session":
            return "pi"
        if line.get("format") == "tangents-session":
            return "tangents"
        if is_mplp_dialog(line):
            return "mplp"
        if "messages" in line and "type" not in line:
            return "openai"
        if any("parentUuid" in each or each.get("type") in CLAUDE_ONLY for each in lines):
            return "claude"
        if isinstance(line.get("type"), str):
            return "pi"
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        # Let the format that looks likeliest report where the JSON breaks.
        first = stripped.split("\n", 1)[0]
        return "pi" if '"type"' in first and '"session"' in first else "tangents"
    if is_mplp_dialog(document):
        return "mplp"
    if isinstance(document, dict) and "messages" in document and "format" not in document:
        return "openai"
    return "tangents"


def _first_objects(text: str) -> list[dict]:
    """The leading lines of ``text`` that are each a JSON object (none if the
    first is not)."""
    found = []
    for raw in text.split("\n", SNIFF_LINES)[:SNIFF_LINES]:
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            break
        if not isinstance(value, dict):
            break
        found.append(value)
    return found


def parse_import(text: str, format: str = "auto", *, new_ids: bool = False) -> ImportedSession:
    """Parse a file's text into a session ready to store; :class:`FormatError` if it cannot be.

    ``new_ids`` gives a Tangents export fresh ids throughout (the other
    formats always get fresh ids).
    """
    if format == "auto":
        format = detect_format(text)
    if format == "tangents":
        from core.formats.tangents_json import from_json_text

        return from_json_text(text, new_ids=new_ids)
    if format == "openai":
        from core.formats.openai import from_openai_text

        return from_openai_text(text)
    if format == "pi":
        from core.formats.pi import from_pi_jsonl

        return from_pi_jsonl(text)
    if format == "mplp":
        from core.formats.mplp_import import from_mplp_text

        return from_mplp_text(text)
    if format == "claude":
        from core.formats.claude import from_claude_jsonl

        return from_claude_jsonl(text)
    raise ValueError(f"unknown import format: {format!r}")
