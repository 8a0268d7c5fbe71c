"""Claude Code files, pi fragments and pi exports, mutated at random: an
import either succeeds or raises FormatError naming a line, never another
exception."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.formats import FormatError, parse_import
from core.formats.pi_export import to_pi_jsonl
from tests.formats.helpers import FIXTURES, PI_LOCAL
from tests.formats.sample import sample_session
from tests.formats.test_robustness import _mutated

CLAUDE_LINES = [
    line
    for name in ("tools.jsonl", "sidechain.jsonl")
    for line in (FIXTURES / "claude" / name).read_text().splitlines()
]
FRAGMENT_LINES = (PI_LOCAL / "branched.jsonl").read_text().splitlines()[3:]
_sample = sample_session()
EXPORT_LINES = to_pi_jsonl(
    _sample.info, _sample.entries, _sample.labels, _sample.blobs
).splitlines()


def _mutate_a_line(data, lines: list[str], fmt: str) -> None:
    lines = list(lines)
    index = data.draw(st.integers(0, len(lines) - 1))
    lines[index] = json.dumps(_mutated(data.draw, json.loads(lines[index])))
    text = "\n".join(lines)
    try:
        parse_import(text, fmt)
    except FormatError as error:
        assert error.reason and (error.line is not None or "no messages" in error.reason)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_claude_lines(data) -> None:
    _mutate_a_line(data, CLAUDE_LINES, "claude")


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_pi_fragments(data) -> None:
    _mutate_a_line(data, FRAGMENT_LINES, "pi")


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_pi_exports(data) -> None:
    _mutate_a_line(data, EXPORT_LINES, "pi")
