"""Build typed settings from a TOML mapping, with every problem found at once.

The settings dataclasses are the model: a field's type says what the file may
hold there (``bool``, ``int``, ``float``, ``str``, ``X | None``,
``tuple[X, ...]``, ``dict[str, X]``, another settings class), and its metadata
may bound a number (:func:`bounded`) or list the allowed words
(:func:`choice`). :func:`build` returns the settings with each value that has
a problem left at its default, and one :class:`Problem` per wrong value, so a
user fixes a file in one go rather than one traceback at a time.
"""

from __future__ import annotations

import json
import math
import re
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SHOWN = 40
"""At most this many characters of a wrong value are quoted."""


@dataclass(frozen=True)
class Problem:
    """One wrong value: where it is (``tools.mcp_ready_wait``) and what is wrong."""

    key: str
    what: str

    def __str__(self) -> str:
        return f"{self.key}: {self.what}"


def bounded(default: Any, low: float, high: float) -> Any:
    """A number field (or a table of numbers) whose values lie in ``low..high``."""
    if isinstance(default, dict):
        return field(default_factory=dict, metadata={"bounds": (low, high)})
    return field(default=default, metadata={"bounds": (low, high)})


def choice(default: str, options: tuple[str, ...]) -> Any:
    """A string field that takes one of ``options``."""
    return field(default=default, metadata={"choices": options})


class _Bad:
    """A value that failed its check (and was reported)."""


_BAD = _Bad()


def build(
    cls: type[T],
    data: Any,
    problems: list[Problem],
    where: str = "",
    skip: frozenset[str] = frozenset(),
) -> T | None:
    """``cls`` from ``data``; None when a field it cannot do without is wrong or
    missing. ``skip`` names fields no file may set."""
    if not isinstance(data, dict):
        problems.append(Problem(where, f"must be a table, not {_shown(data)}"))
        return None
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in fields(cls) if f.init and f.name not in skip}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = _join(where, key)
        if key not in known:
            problems.append(Problem(name, "unknown setting"))
            continue
        checked = _check(hints[key], value, name, known[key].metadata, problems)
        if checked is not _BAD:
            values[key] = checked
    missing = [
        f.name
        for f in known.values()
        if f.default is MISSING and f.default_factory is MISSING and f.name not in values
    ]
    for name in missing:
        if name not in data:
            problems.append(Problem(_join(where, name), "missing"))
    return None if missing else cls(**values)


def _check(
    kind: Any, value: Any, name: str, meta: typing.Mapping[str, Any], problems: list[Problem]
) -> Any:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (types.UnionType, typing.Union):
        # TOML has no null: ``X | None`` holds an X when it is given at all
        kind = next(a for a in args if a is not type(None))
        origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is tuple:
        if not isinstance(value, list):
            return _wrong(problems, name, "an array", value)
        items = [
            _check(args[0], item, f"{name}[{i}]", meta, problems) for i, item in enumerate(value)
        ]
        return _BAD if any(item is _BAD for item in items) else tuple(items)
    if origin is dict:
        if not isinstance(value, dict):
            return _wrong(problems, name, "a table", value)
        checked = {k: _check(args[1], v, _join(name, k), meta, problems) for k, v in value.items()}
        return _BAD if any(v is _BAD for v in checked.values()) else checked
    if is_dataclass(kind):
        built = build(kind, value, problems, name)  # type: ignore[arg-type]
        return _BAD if built is None else built
    return _scalar(kind, value, name, meta, problems)


def _scalar(
    kind: Any, value: Any, name: str, meta: typing.Mapping[str, Any], problems: list[Problem]
) -> Any:
    if kind is bool:
        return value if isinstance(value, bool) else _wrong(problems, name, "true or false", value)
    if kind is str:
        if not isinstance(value, str):
            return _wrong(problems, name, "a string", value)
        options = meta.get("choices")
        if options and value not in options:
            return _wrong(problems, name, f"one of {', '.join(options)}", value)
        return value
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        return _wrong(problems, name, "a whole number", value)
    if kind is float:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            return _wrong(problems, name, "a number", value)
        value = float(value)
    low, high = meta.get("bounds", (-math.inf, math.inf))
    if not low <= value <= high:
        problems.append(Problem(name, f"must be between {low} and {high}, not {_shown(value)}"))
        return _BAD
    return value


def _wrong(problems: list[Problem], name: str, wanted: str, value: Any) -> _Bad:
    problems.append(Problem(name, f"must be {wanted}, not {_shown(value)}"))
    return _BAD


def _shown(value: Any) -> str:
    """A wrong value as the user wrote it, cut short: a string quoted, a table or
    an array by its kind (its contents may be long)."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(
            value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…", ensure_ascii=False
        )
    if isinstance(value, int) and value.bit_length() > 128:
        return "a number that large"
    return str(value)


def _join(where: str, key: str) -> str:
    """``where.key``, quoting a key TOML would quote (``context_windows."local/x"``)."""
    shown = key if _BARE_KEY.fullmatch(key) else '"' + key.replace('"', '\\"') + '"'
    return f"{where}.{shown}" if where else shown
