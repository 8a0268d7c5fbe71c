"""Cost in USD, part by part, from litellm's bundled price map.

The map is the JSON file shipped in litellm's package, read directly (once):
importing litellm takes seconds, far too long to price a reply. Parsing its
3 MB of JSON would add to the first request's wait, so a copy is kept in
Python's marshal format where Python keeps this package's bytecode, and for
the same reason: it is made from installed files, once, and made again
whenever litellm's file changes (:func:`_read_table`). The copy holds each
model's entry encoded on its own, decoded when it is first asked for: reading
it is a small part of decoding all 4,000 entries. With
``LITELLM_LOCAL_MODEL_COST_MAP=True`` (set by :mod:`core.providers.sdk`)
``litellm.model_cost`` is that same file. Tiered prices (above 200k tokens,
priority, batch) are not applied.
"""

from __future__ import annotations

import json
import marshal
import os
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from core.providers.model_entry import bundled_table
from core.sessions.messages import Usage

_COPY = Path(__file__).parent / "__pycache__" / "litellm-prices-by-model.marshal"


_reading = threading.Lock()


def price_table() -> Mapping[str, Any]:
    """The map, read once: threads that want it at once (the SDK's import,
    the window's lookup) wait for one reading rather than each parse it."""
    with _reading:
        return _read_table()


@cache
def _read_table() -> Mapping[str, Any]:
    source = bundled_table()
    if source is None:
        return {}
    stamp = _stamp(source)
    try:
        kept_stamp, entries = marshal.loads(_COPY.read_bytes())
        if kept_stamp == stamp and isinstance(entries, dict):
            return _Entries(entries)
    except (OSError, ValueError, EOFError, TypeError):
        pass  # no copy yet, another litellm's, or damaged: read the JSON
    table = json.loads(source.read_text(encoding="utf-8"))
    if not sys.dont_write_bytecode:  # where Python writes no bytecode, no copy either
        _keep(_COPY, stamp, {model: marshal.dumps(entry) for model, entry in table.items()})
    return table


class _Entries(Mapping[str, Any]):
    """The map read from its copy: each model's entry decoded when first asked for."""

    def __init__(self, encoded: dict[str, bytes]) -> None:
        self._encoded = encoded
        self._decoded: dict[str, Any] = {}

    def __getitem__(self, model: str) -> Any:
        try:
            return self._decoded[model]
        except KeyError:
            entry = self._decoded[model] = marshal.loads(self._encoded[model])
            return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._encoded)

    def __len__(self) -> int:
        return len(self._encoded)


def _stamp(source: Path) -> str:
    """What the copy was made from: litellm's file (where, how big, when
    written) and this Python's marshal format."""
    info = source.stat()
    return f"{source}|{info.st_size}|{info.st_mtime_ns}|{sys.version_info[:2]}|{marshal.version}"


def _keep(copy: Path, stamp: str, entries: dict[str, bytes]) -> None:
    """Write the copy whole or not at all (a temporary file renamed over it);
    a directory that cannot be written only means no copy."""
    temporary = copy.with_name(f"{copy.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        copy.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(marshal.dumps((stamp, entries)))
        os.replace(temporary, copy)
    except OSError:
        temporary.unlink(missing_ok=True)


def load_table(_sdk: object = None) -> None:
    """Read the table now (an SDK's ``prepare``, in its import thread), not on
    the event loop at the end of the first reply."""
    price_table()


def prices_for(model: str) -> Mapping[str, Any] | None:
    """The price map entry for ``model``: tried as given, then without its provider prefix."""
    table = price_table()
    candidates = [model]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for name in candidates:
        entry = table.get(name)
        if entry and "input_cost_per_token" in entry:
            return entry
    return None


def cost_for(model: str, usage: Usage) -> Usage:
    """``usage`` with its cost fields filled; all zero for a model with no known price.

    Cache reads and writes without a price of their own cost as much as input.
    """
    prices = prices_for(model)
    if prices is None:
        return replace(
            usage, input_cost=0.0, output_cost=0.0, cache_read_cost=0.0, cache_write_cost=0.0
        )
    input_price = float(prices.get("input_cost_per_token") or 0.0)
    output_price = float(prices.get("output_cost_per_token") or 0.0)
    read_price = prices.get("cache_read_input_token_cost")
    write_price = prices.get("cache_creation_input_token_cost")
    return replace(
        usage,
        input_cost=usage.input_tokens * input_price,
        output_cost=usage.output_tokens * output_price,
        cache_read_cost=usage.cache_read_tokens
        * float(input_price if read_price is None else read_price),
        cache_write_cost=usage.cache_write_tokens
        * float(input_price if write_price is None else write_price),
    )
