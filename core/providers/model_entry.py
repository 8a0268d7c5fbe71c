"""One model's entry in litellm's bundled model table, parsed alone.

The table is one JSON file of a few MB in litellm's package;
:mod:`core.providers.cost` reads it whole, for prices, off the event loop.
What the first frame needs (the footer's context window) is one entry: its
key is found in the file's bytes (a JSON string followed by ``:`` can only be
a key) and only the object after it is parsed, so the lookup costs a search,
not a parse of the whole table.
"""

from __future__ import annotations

import importlib.util
import json
import mmap
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

BUNDLED_TABLE = "model_prices_and_context_window_backup.json"
_AFTER_KEY = re.compile(rb"\s*:\s*\{")
_FIRST_SLICE = 16_384
"""Bytes decoded for an entry at first (entries are a few hundred to a few
thousand bytes); twice as many each time that is not enough."""


def bundled_table() -> Path | None:
    """litellm's model table file, located without importing litellm (seconds)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / BUNDLED_TABLE


@cache
def model_entry(*names: str) -> Mapping[str, Any] | None:
    """The table's entry for the first of ``names`` it holds; None when it
    holds none, or there is no table. Looked up once per ``names``."""
    path = bundled_table()
    if path is None:
        return None
    try:
        # Mapped, not read: searched where the page cache holds it, no 3 MB copy.
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as table:
            found = (entry_in(table, name) for name in names)
            return next((entry for entry in found if entry is not None), None)
    except (OSError, ValueError):  # missing, unreadable, or empty (nothing to map)
        return None


def entry_in(table: bytes | mmap.mmap, name: str) -> Mapping[str, Any] | None:
    """Pure. The object ``table`` (the file's bytes, or the file mapped)
    holds under the key ``name``; of two such keys the last, as
    :func:`json.loads` keeps."""
    key = json.dumps(name).encode()
    end = len(table)
    while (at := table.rfind(key, 0, end)) >= 0:
        after = _AFTER_KEY.match(table, at + len(key))
        if after is not None:
            return _object_at(table, after.end() - 1)
        end = at
    return None


def _object_at(table: bytes | mmap.mmap, start: int) -> Mapping[str, Any] | None:
    """The JSON object that begins at ``start``, decoding no more of the file
    than it needs; None when it is malformed."""
    size = _FIRST_SLICE
    while True:
        text = table[start : start + size].decode("utf-8", errors="replace")
        try:
            value, _ = json.JSONDecoder().raw_decode(text)
        except json.JSONDecodeError:
            if start + size >= len(table):
                return None
            size *= 2
            continue
        return value if isinstance(value, dict) else None
