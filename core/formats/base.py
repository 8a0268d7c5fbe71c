"""What every importer shares: the error, the result, and small helpers
(parent-first ordering, timestamps, images, line numbers inside JSON text)."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core import values
from core.sessions.entries import Entry
from core.sessions.images import image_blob
from core.sessions.persistence import Blob, SessionInfo


class FormatError(Exception):
    """A file that cannot be imported: where (``line``, 1-based, or ``None``
    for the file as a whole) and why."""

    def __init__(self, line: int | None, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


@dataclass(frozen=True)
class ImportedSession:
    """A parsed file, ready for ``SessionStore.import_session``: entries are
    ordered parent before child and reference only each other."""

    format: str
    info: SessionInfo
    entries: tuple[Entry, ...]
    labels: dict[str, str] = field(default_factory=dict)
    blobs: tuple[Blob, ...] = ()
    notes: tuple[str, ...] = ()
    """What the importer left out or changed, one sentence each."""

    def counts(self) -> dict[str, int]:
        kinds = Counter(entry.type for entry in self.entries)
        parents = {entry.parent_id for entry in self.entries}
        return {
            "entries": len(self.entries),
            "messages": kinds["message"],
            "compactions": kinds["compaction"],
            "branch_summaries": kinds["branch_summary"],
            "model_changes": kinds["model_change"],
            "branches": sum(1 for entry in self.entries if entry.id not in parents),
            "labels": len(self.labels),
            "images": len(self.blobs),
        }


class TreeError(ValueError):
    """Entries that do not form a tree: a missing parent, or a cycle."""

    def __init__(self, entry_id: str, reason: str) -> None:
        self.entry_id = entry_id
        super().__init__(f"entry {entry_id}: {reason}")


def parent_first(entries: Sequence[Entry]) -> list[Entry]:
    """``entries`` reordered so every parent comes before its children, keeping
    the given order otherwise. :class:`TreeError` if a parent is missing or
    the parent links form a cycle."""
    by_id = {entry.id for entry in entries}
    done: set[str] = set()
    waiting: dict[str, list[Entry]] = {}
    out: list[Entry] = []

    def place(entry: Entry) -> None:
        stack = [entry]
        while stack:
            current = stack.pop()
            out.append(current)
            done.add(current.id)
            stack.extend(reversed(waiting.pop(current.id, [])))

    for entry in entries:
        if entry.parent_id is None or entry.parent_id in done:
            place(entry)
        elif entry.parent_id in by_id:
            waiting.setdefault(entry.parent_id, []).append(entry)
        else:
            raise TreeError(entry.id, f"its parent {entry.parent_id} is not in the file")
    if waiting:
        stuck = next(iter(waiting.values()))[0]
        raise TreeError(stuck.id, "its parent links form a cycle")
    return out


def format_timestamp(moment: datetime) -> str:
    """Tangents' timestamp form (UTC, microseconds), which sorts as text."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(value: Any) -> str | None:
    """An ISO 8601 string or Unix milliseconds as a Tangents timestamp; None if neither."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            return format_timestamp(datetime.fromtimestamp(value / 1000, UTC))
        if isinstance(value, str) and value:
            moment = datetime.fromisoformat(
                value.replace("Z", "+00:00") if value.endswith("Z") else value
            )
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return format_timestamp(moment)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def decode_base64(data: Any) -> bytes:
    if not isinstance(data, str):
        raise ValueError("image data must be a base64 string")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("image data is not valid base64") from None


def data_url_blob(url: str) -> Blob:
    """A blob from a ``data:image/...;base64,...`` URL."""
    match = re.match(r"data:([\w.+-]+/[\w.+-]+)?((?:;[^,;]*)*?);base64,(.*)\Z", url, re.DOTALL)
    if not match:
        raise ValueError("image URL is not a base64 data URL")
    return image_blob(decode_base64(match.group(3).strip()))


# --- reading JSON from elsewhere ----------------------------------------------

MAX_JSON_DEPTH = 200
"""Deeper nesting is refused: no real session nests so deep, and recursive
code (``json.loads`` itself, the encoder that saves a payload) would fail."""
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]|[\]}]')


_LONG_NUMBER = re.compile(rf"-?\d{{{values.MAX_DIGITS + 1},}}")


def _whole(digits: str) -> int:
    """An integer of the file: one written with more digits than any count
    holds is refused (:func:`core.values.number_text`)."""
    return values.number_text(digits, "a number")


class _NotFinite(ValueError):
    def __init__(self, literal: str) -> None:
        self.literal = literal


def _refuse_constant(literal: str) -> Any:
    raise _NotFinite(literal)


def _finite(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise _NotFinite(literal)
    return value


class JsonReader:
    """``json.loads`` for files from elsewhere, whose text may be hostile.

    :meth:`load` raises ``json.JSONDecodeError`` as ``json.loads`` does (the
    caller words it, see :func:`json_error`) and :class:`FormatError` naming
    the line for what ``json.loads`` accepts but a session must not hold:
    ``NaN``, ``Infinity``, a number too large for a float, an integer of more
    than :data:`core.values.MAX_DIGITS` digits, and nesting
    deeper than :data:`MAX_JSON_DEPTH`. Lone surrogates (``\\ud800``, which no
    UTF-8 file or database can hold) become U+FFFD; :meth:`notes` says so.
    """

    def __init__(self) -> None:
        self.replaced = 0
        self.first_replaced_line: int | None = None

    def load(self, text: str, line: int = 1) -> Any:
        """The JSON value in ``text``, whose first line is line ``line`` of the file."""
        try:
            document = json.loads(
                text, parse_constant=_refuse_constant, parse_float=_finite, parse_int=_whole
            )
        except values.BadValue as error:
            at = _LONG_NUMBER.search(text)
            raise FormatError(_line_at(text, at.start() if at else 0, line), str(error)) from None
        except _NotFinite as error:
            at = re.search(rf"(?<![\w.]){re.escape(error.literal)}(?![\w.])", text)
            raise FormatError(
                _line_at(text, at.start() if at else 0, line),
                f"{error.literal} is not a number a session can hold",
            ) from None
        except RecursionError:
            raise self._too_deep(text, line) from None
        document, replaced = _checked(document)
        if replaced is None:
            raise self._too_deep(text, line)
        if replaced:
            self.replaced += replaced
            if self.first_replaced_line is None:
                at = _SURROGATE_ESCAPE.search(text)
                self.first_replaced_line = _line_at(text, at.start() if at else 0, line)
        return document

    def objects(self, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
        """Each non-blank line of a JSON Lines file, as ``(line number, object)``;
        :class:`FormatError` naming the line for one that is not a JSON object
        (a last line cut short says the file may be truncated)."""
        lines = text.split("\n")
        last = max((i for i, raw in enumerate(lines) if raw.strip()), default=-1)
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                data = self.load(raw, number)
            except json.JSONDecodeError as error:
                reason = f"not valid JSON ({error.msg}, column {error.colno})"
                looks_cut = not text.endswith("\n") or "truncated" in json_error(error, raw).reason
                if number - 1 == last and looks_cut:
                    reason += "; the file ends too early (truncated?)"
                raise FormatError(number, reason) from None
            if not isinstance(data, dict):
                raise FormatError(number, "expected a JSON object")
            yield number, data

    def notes(self) -> list[str]:
        """One sentence on what was repaired, if anything."""
        if not self.replaced:
            return []
        return [
            f"line {self.first_replaced_line}: {self.replaced} text(s) held a lone surrogate "
            "(half of a UTF-16 pair), replaced with U+FFFD"
        ]

    @staticmethod
    def _too_deep(text: str, line: int) -> FormatError:
        depth = 0
        for match in _NESTING.finditer(text):
            char = match.group()
            if char in "[{":
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    return FormatError(
                        _line_at(text, match.start(), line),
                        f"nested more than {MAX_JSON_DEPTH} levels deep",
                    )
            elif char in "]}":
                depth -= 1
        return FormatError(line, f"nested more than {MAX_JSON_DEPTH} levels deep")


def _line_at(text: str, pos: int, first_line: int) -> int:
    return first_line + text.count("\n", 0, pos)


def _checked(document: Any) -> tuple[Any, int | None]:
    """``document`` with lone surrogates replaced, and how many strings held
    one; ``None`` for the count if it nests deeper than :data:`MAX_JSON_DEPTH`.
    Iterative, so any depth is safe to look at."""
    replaced = 0

    def fix(value: Any) -> Any:
        nonlocal replaced
        if isinstance(value, str) and _SURROGATE.search(value):
            replaced += 1
            return _SURROGATE.sub("\ufffd", value)
        return value

    root = [fix(document)]
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        container, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return document, None
        if isinstance(container, list):
            for index, value in enumerate(container):
                container[index] = value = fix(value)
                if isinstance(value, (list, dict)):
                    stack.append((value, depth + 1))
        else:
            for key in list(container):
                value = fix(container[key])
                fixed_key = fix(key)
                if fixed_key != key:
                    del container[key]
                container[fixed_key] = value
                if isinstance(value, (list, dict)):
                    stack.append((value, depth + 1))
    return root[0], replaced


def tool_arguments(raw: str, reader: JsonReader) -> dict[str, Any]:
    """A tool call's arguments parsed from their JSON text; ``{}`` when that is
    not a JSON object (a model's bad JSON is kept verbatim beside it)."""
    try:
        parsed = reader.load(raw) if raw.strip() else {}
    except (ValueError, FormatError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


# --- line numbers inside JSON text ------------------------------------------

_decode = json.JSONDecoder().raw_decode
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    assert match is not None  # the pattern matches the empty string too
    return match.end()


def line_of(text: str, path: Iterable[str | int]) -> int | None:
    """The 1-based line where the value at ``path`` (keys and indexes) starts
    in the JSON ``text``; None if it cannot be found."""
    try:
        pos = _skip(text, 0)
        for key in path:
            if isinstance(key, int):
                if text[pos] != "[":
                    return None
                pos = _skip(text, pos + 1)
                for _ in range(key):
                    _, pos = _decode(text, pos)
                    pos = _skip(text, pos)
                    if text[pos] != ",":
                        return None
                    pos = _skip(text, pos + 1)
                if text[pos] == "]":
                    return None
            else:
                if text[pos] != "{":
                    return None
                pos = _skip(text, pos + 1)
                while True:
                    name, pos = _decode(text, pos)
                    pos = _skip(text, pos)
                    if text[pos] != ":":
                        return None
                    pos = _skip(text, pos + 1)
                    if name == key:
                        break
                    _, pos = _decode(text, pos)
                    pos = _skip(text, pos)
                    if text[pos] != ",":
                        return None
                    pos = _skip(text, pos + 1)
    except (IndexError, ValueError):
        return None
    return text.count("\n", 0, pos) + 1


def json_error(error: json.JSONDecodeError, text: str) -> FormatError:
    """A decoding error as a :class:`FormatError`, saying when the text just stops."""
    truncated = error.pos >= len(text.rstrip()) or (
        error.msg.startswith("Unterminated string") and '"' not in text[error.pos + 1 :]
    )
    reason = f"not valid JSON ({error.msg}, column {error.colno})"
    if truncated:
        reason += "; the file ends too early (truncated?)"
    return FormatError(error.lineno, reason)
