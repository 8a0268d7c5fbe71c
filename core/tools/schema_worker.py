"""Checking a tool call's arguments against its schema, as its own process.

A schema from an MCP server may hold a ``pattern`` that backtracks for hours
(``^(a+)+$`` against forty ``a`` and a ``!``), and Python's ``re`` holds the
interpreter while it matches: only a separate process can be stopped. So
core.tools.arg_check runs ``python -I schema_worker.py`` for such schemas
and kills it at its deadline. Standard library and jsonschema only.

Input on stdin, one JSON object: ``parent`` (our pid), ``schema``, ``value``,
``limit``. Output on stdout: a JSON list of readable problems (empty: valid).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def readable_errors(validator: Any, value: Any, limit: int) -> list[str]:
    """Schema violations as ``at 'path': ...`` lines, at most ``limit`` and a count of the rest."""
    errors = sorted(
        validator.iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message)
    )
    out = []
    for error in errors[:limit]:
        where = "/".join(str(p) for p in error.absolute_path)
        out.append(f"at '{where}': {error.message}" if where else error.message)
    if len(errors) > limit:
        out.append(f"and {len(errors) - limit} more")
    return out


def _die_with_parent(parent: int) -> None:
    """On Linux, be SIGKILLed when Tangents dies: a match can spin for hours."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        sys.exit(1)


def main() -> int:
    job = json.load(sys.stdin)
    _die_with_parent(job["parent"])
    from jsonschema import Draft202012Validator, validators

    schema = job["schema"]
    validator = validators.validator_for(schema, default=Draft202012Validator)(schema)
    json.dump(readable_errors(validator, job["value"], job["limit"]), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
