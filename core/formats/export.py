"""Exporting a stored session as text in one of the export formats, and the
file name an export gets by default. Reads go through the SessionStore.

An export may be written to a terminal or shown with ``cat``: no format holds
a raw control character from the session. Machine formats (json, pi, openai,
mplp) keep every text exact as JSON escapes (:func:`json_for_terminal`);
human formats (markdown, html) pass through :func:`strip_control`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.sanitize import json_for_terminal, strip_control
from core.sessions.context import Context
from core.sessions.persistence import Blob, SessionInfo, SessionStore

EXPORT_FORMATS = ("json", "markdown", "openai", "mplp", "pi", "html")
HUMAN_FORMATS = ("markdown", "html")
EXTENSIONS = {
    "json": ".json",
    "markdown": ".md",
    "openai": ".openai.json",
    "mplp": ".mplp.json",
    "pi": ".pi.jsonl",
    "html": ".html",
}
NAME_CHARS = 60


async def export_text(
    store: SessionStore,
    info: SessionInfo,
    format: str,
    *,
    all_branches: bool = False,
    context: Context | None = None,
) -> str:
    """``json``, ``pi`` and ``html``: the whole tree (with image bytes); the
    others: the current branch (``markdown`` with ``all_branches``: then every
    other branch). ``openai`` sends ``context`` when given (what the next
    request sends, fitted to the model's window), else the whole branch."""
    text = await _export(store, info, format, all_branches, context)
    return strip_control(text) if format in HUMAN_FORMATS else text


async def _export(
    store: SessionStore,
    info: SessionInfo,
    format: str,
    all_branches: bool,
    context: Context | None,
) -> str:
    from core.formats.html import to_html
    from core.formats.markdown import to_markdown
    from core.formats.mplp import to_mplp_dialog
    from core.formats.openai import context_to_openai, to_openai_messages
    from core.formats.pi_export import to_pi_jsonl
    from core.formats.tangents_json import image_shas, to_json_document

    if format not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format: {format!r}")
    if format in ("json", "pi", "html"):
        entries = await store.entries(info.id)
        blobs = await _blobs(store, image_shas(entries))
        labels = await store.labels(info.id)
        if format == "pi":
            return to_pi_jsonl(info, entries, labels, blobs)
        if format == "html":
            return to_html(info, entries, labels, blobs)
        return _json(to_json_document(info, entries, labels, blobs.values()))
    path = await store.path(info.leaf_id) if info.leaf_id else []
    if format == "openai":
        blobs = await _blobs(store, image_shas(path))
        if context is not None:
            return _json(context_to_openai(context, blobs))
        return _json(to_openai_messages(path, blobs))
    if format == "mplp":
        return _json(to_mplp_dialog(info, path, await store.labels(info.id)))
    if all_branches:
        from core.branching.tree import SessionTree
        from core.formats.markdown_branches import to_markdown_all_branches

        entries = await store.entries(info.id)
        tree = SessionTree.from_entries(entries, await store.labels(info.id), info.leaf_id)
        return to_markdown_all_branches(info, path, tree)
    return to_markdown(info, path)


def _json(document: Any) -> str:
    """Readable JSON that is safe on a terminal and parses back exactly."""
    return json_for_terminal(document) + "\n"


async def _blobs(store: SessionStore, shas: Iterable[str]) -> dict[str, Blob]:
    """The stored images by sha256 (missing ones left out)."""
    found = {}
    for sha in shas:
        blob = await store.get_blob(sha)
        if blob is not None:
            found[sha] = blob
    return found


def default_file_name(info: SessionInfo, format: str) -> str:
    """``planting-oaks.md``: the title made file-name safe (else the id)."""
    slug = re.sub(r"[^\w]+", "-", (info.title or "").lower()).strip("-_")[:NAME_CHARS].rstrip("-_")
    return (slug or f"session-{info.id[:8]}") + EXTENSIONS[format]


def free_path(directory: Path, name: str) -> Path:
    """``directory/name``, or ``name-2``, ``name-3``... if that is taken."""
    stem, dot, extension = name.partition(".")
    candidate, number = directory / name, 1
    while candidate.exists():
        number += 1
        candidate = directory / f"{stem}-{number}{dot}{extension}"
    return candidate
