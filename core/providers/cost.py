"""Cost in USD, part by part, from litellm's bundled price map.

The map is the JSON file shipped in litellm's package, read directly (once,
~30 ms): importing litellm takes seconds, far too long to price a reply. With
``LITELLM_LOCAL_MODEL_COST_MAP=True`` (set by :mod:`core.providers.sdk`)
``litellm.model_cost`` is that same file. Tiered prices (above 200k tokens,
priority, batch) are not applied.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from core.messages import Usage

_BUNDLED_PRICES = "model_prices_and_context_window_backup.json"


_reading = threading.Lock()


def price_table() -> Mapping[str, Any]:
    """The map, read once: threads that want it at once (the SDK's import,
    the window's lookup) wait for one reading rather than each parse it."""
    with _reading:
        return _read_table()


@cache
def _read_table() -> Mapping[str, Any]:
    spec = importlib.util.find_spec("litellm")  # locates the package without importing it
    if spec is None or spec.origin is None:
        return {}
    return json.loads((Path(spec.origin).parent / _BUNDLED_PRICES).read_text(encoding="utf-8"))


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
