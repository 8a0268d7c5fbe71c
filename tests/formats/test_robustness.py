"""Whatever a file holds, an import either succeeds or raises FormatError
with a line number: never another exception (a traceback for the user)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.formats import FormatError, parse_import
from tests.formats.helpers import PI_LOCAL

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value, prefix=()):
    """Every (path, value) inside a JSON value."""
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, prefix + (key,))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, prefix + (index,))


def _set(document, path, value):
    if not path:
        return value
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return document


def _mutated(draw, document):
    paths = list(_paths(document))
    path = draw(st.sampled_from(paths))
    return _set(document, path, draw(json_values))


def _accepts_or_refuses(text: str, fmt: str) -> None:
    try:
        parse_import(text, fmt)
    except FormatError as error:
        assert error.reason
        if fmt == "pi":
            assert error.line is not None or not text.strip()


PI_LINES = (PI_LOCAL / "branched.jsonl").read_text().splitlines()


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_pi_lines(data) -> None:
    lines = list(PI_LINES)
    index = data.draw(st.integers(0, len(lines) - 1))
    lines[index] = json.dumps(_mutated(data.draw, json.loads(lines[index])))
    _accepts_or_refuses("\n".join(lines), "pi")


OPENAI = [
    {"role": "system", "content": "Be brief."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "hi"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "hm",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_openai_messages(data) -> None:
    document = _mutated(data.draw, json.loads(json.dumps(OPENAI)))
    _accepts_or_refuses(json.dumps(document, indent=2), "openai")


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_tangents_documents(data) -> None:
    from core.formats.pi import from_pi_jsonl
    from core.formats.tangents_json import to_json_document

    if not hasattr(test_mutated_tangents_documents, "document"):
        imported = from_pi_jsonl("\n".join(PI_LINES))
        test_mutated_tangents_documents.document = to_json_document(
            imported.info, imported.entries, imported.labels, imported.blobs
        )
    document = _mutated(data.draw, json.loads(json.dumps(test_mutated_tangents_documents.document)))
    _accepts_or_refuses(json.dumps(document, indent=2), "tangents")
