"""Session formats: pure conversions between a session and files.

Exports (a session in, text out): Markdown and Tangents JSON
(:mod:`core.formats.markdown`, :mod:`core.formats.tangents_json`), OpenAI
chat-completions messages (:mod:`core.formats.openai`) and MPLP dialogs
(:mod:`core.formats.mplp`).

Imports (text in, an :class:`ImportedSession` out, nothing written): Tangents
JSON, OpenAI ``messages`` arrays and pi session files (:mod:`core.formats.pi`).
A file that cannot be imported whole raises :class:`FormatError` naming the
line and the reason; the caller writes an imported session in one
transaction (``SessionStore.import_session``), so nothing is half imported.
"""

from __future__ import annotations

import json

from core.formats.base import FormatError, ImportedSession

IMPORT_FORMATS = ("tangents", "openai", "pi")

__all__ = ["FormatError", "IMPORT_FORMATS", "ImportedSession", "detect_format", "parse_import"]


def detect_format(text: str) -> str:
    """``tangents``, ``openai`` or ``pi``, guessed from the content.

    A pi file is JSON lines whose first line is a ``session`` header; a
    Tangents export is one object with ``"format": "tangents-session"``; an
    OpenAI conversation is an array of messages (or an object holding one
    under ``messages``).
    """
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "openai"
    first = stripped.split("\n", 1)[0]
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):
        header = None
    if isinstance(header, dict) and header.get("type") == "session":
        return "pi"
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        # Let the format that looks likeliest report where the JSON breaks.
        return "pi" if '"type"' in first and '"session"' in first else "tangents"
    if isinstance(document, dict) and "messages" in document and "format" not in document:
        return "openai"
    return "tangents"


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
    raise ValueError(f"unknown import format: {format!r}")
