"""Paths to the fixtures and the MPLP schema validator, shared by format and CLI tests."""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from jsonschema import Draft7Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

FIXTURES = Path(__file__).parents[1] / "fixtures"
PI_REAL = FIXTURES / "pi-mono"
"""Real pi session files (see SOURCE.md there)."""
PI_LOCAL = FIXTURES / "pi"
"""Hand-written pi session files for the edge cases (README.md there)."""
MPLP = FIXTURES / "mplp"
"""The MPLP v2 dialog schema and the schemas it references (SOURCE.md there)."""


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _formats() -> FormatChecker:
    """jsonschema's checker, with ``date-time`` checked even without the
    optional rfc3339-validator package: RFC 3339 syntax and a real date."""
    checker = FormatChecker()

    @checker.checks("date-time", raises=ValueError)
    def date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not _RFC3339.fullmatch(value):
            return False
        datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
        return True

    return checker


@lru_cache(maxsize=1)
def mplp_validator() -> Draft7Validator:
    """The dialog schema, its relative ``$ref``s to ``common/`` resolved through
    a registry of every schema file under their ``$id``s; formats checked."""
    resources = []
    for path in sorted(MPLP.rglob("*.schema.json")):
        schema = json.loads(path.read_text())
        resources.append(
            (schema["$id"], Resource.from_contents(schema, default_specification=DRAFT7))
        )
    registry = Registry().with_resources(resources)
    dialog = json.loads((MPLP / "mplp-dialog.schema.json").read_text())
    Draft7Validator.check_schema(dialog)
    return Draft7Validator(dialog, registry=registry, format_checker=_formats())


def mplp_errors(document: dict) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in mplp_validator().iter_errors(document)
    ]
