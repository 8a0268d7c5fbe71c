"""Typed checks for values from outside: provider chunks, window probes,
imported files and database payloads.

Each check returns a value that is safe to keep (saved, summed, shown) or
raises :class:`BadValue` with a one-line reason. Strings lose their lone
surrogates (half of a UTF-16 pair: no UTF-8 file or database can hold one),
counts are integers in a range any real value fits in, and JSON is refused
past a nesting depth that recursive code (the encoder that saves a payload)
could not handle.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_COUNT = 10**15
"""The largest token count or window taken: far above any real one, and small
enough for every sum and ratio made of it to stay a float."""
MAX_DEPTH = 200
"""Deeper JSON is refused (the same bound as imports)."""
MAX_DIGITS = 20
"""A number written with more digits is refused before it is converted
(Python refuses past 4,300 digits, and converting is quadratic before that)."""

_SURROGATES = re.compile(r"[\ud800-\udfff]")


class BadValue(ValueError):
    """A value from outside that cannot be kept; the message is one line."""


def text(value: Any, what: str) -> str:
    """``value`` as a string without lone surrogates (each becomes U+FFFD)."""
    if not isinstance(value, str):
        raise BadValue(f"{what} is {_kind(value)}, not text")
    if value.isascii():
        return value
    return _SURROGATES.sub("\ufffd", value)


def optional_text(value: Any, what: str) -> str | None:
    """:func:`text`, with None (JSON null) kept."""
    return None if value is None else text(value, what)


def count(value: Any, what: str, limit: int = MAX_COUNT) -> int:
    """A whole number from 0 to ``limit`` (a float with no fraction is taken)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value) if abs(value) <= limit else limit + 1
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadValue(f"{what} is {_kind(value)}, not a whole number")
    if not 0 <= value <= limit:
        raise BadValue(f"{what} is out of range (0 to {limit:,})")
    return value


def optional_count(value: Any, what: str, limit: int = MAX_COUNT) -> int:
    """:func:`count`, with a missing value (None) as 0."""
    return 0 if value is None else count(value, what, limit)


def number_text(digits: str, what: str) -> int:
    """A whole number written in decimal (``digits``), refused when too long to be real."""
    if len(digits.lstrip("-0")) > MAX_DIGITS:
        raise BadValue(f"{what} has more than {MAX_DIGITS} digits")
    return int(digits)


def loads(raw: str, what: str) -> Any:
    """JSON text as a value (:func:`parse`) with every string and the nesting
    checked (:func:`checked`)."""
    return checked(parse(raw, what), what)


def parse(raw: str, what: str) -> Any:
    """JSON text as a value, refused when malformed, holding a number of more
    than :data:`MAX_DIGITS` digits, or nested too deep for the parser; its
    strings are left to the reader's own checks."""
    try:
        value = json.loads(raw, parse_int=lambda digits: number_text(digits, "a number"))
    except RecursionError:
        raise BadValue(f"{what} is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as error:
        reason = str(error).splitlines()[0] if str(error) else "malformed"
        raise BadValue(f"{what} is not valid JSON ({reason})") from None
    return value


def checked(value: Any, what: str) -> Any:
    """``value`` (parsed JSON) with lone surrogates replaced in every string,
    keys included; refused when nested deeper than :data:`MAX_DEPTH`."""
    return _clean(value, what, 0)


def _clean(value: Any, what: str, depth: int) -> Any:
    if isinstance(value, str):
        return text(value, what)
    if isinstance(value, (dict, list)):
        if depth >= MAX_DEPTH:
            raise BadValue(f"{what} is nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            return {
                text(key, what) if isinstance(key, str) else key: _clean(item, what, depth + 1)
                for key, item in value.items()
            }
        return [_clean(item, what, depth + 1) for item in value]
    return value


def _kind(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
