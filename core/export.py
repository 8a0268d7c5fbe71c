"""Session exports (kept for existing callers; the formats live in :mod:`core.formats`)."""

from __future__ import annotations

from core.formats.markdown import to_markdown
from core.formats.tangents_json import JSON_FORMAT, JSON_VERSION, to_json_document

__all__ = ["JSON_FORMAT", "JSON_VERSION", "to_json_document", "to_markdown"]
