"""JSON that ``json.loads`` takes but a session cannot hold: nesting deep
enough to exhaust the stack, NaN and Infinity, lone surrogates. Each import
format refuses it with a line number, or repairs it with a note."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.formats import FormatError, parse_import
from core.formats.base import MAX_JSON_DEPTH, JsonReader
from core.formats.tangents_json import from_json_text
from core.values import MAX_DIGITS
from tests.formats.helpers import PI_LOCAL
from tests.formats.test_tangents_json import _document

DEEP = "[" * 100_000 + "]" * 100_000
PI_HEADER = (PI_LOCAL / "branched.jsonl").read_text().splitlines()[0]
PI_USER = (
    '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-10T09:00:03.000Z",'
    '"message":{"role":"user","content":"hello"}}'
)


def tangents_with(key: str, value: str) -> str:
    """A Tangents export with ``"key": value`` (raw JSON text) added to its first entry."""
    document = json.loads(_document())
    document["entries"][0][key] = "PLACEHOLDER"
    return json.dumps(document, indent=2).replace('"PLACEHOLDER"', value)


def refused(text: str, format: str = "auto") -> FormatError:
    with pytest.raises(FormatError) as caught:
        parse_import(text, format)
    return caught.value


@pytest.mark.parametrize("format", ["auto", "tangents", "openai", "pi"])
def test_nesting_100000_levels_deep_is_refused_with_its_line(format: str) -> None:
    texts = {
        "tangents": tangents_with("extra", DEEP),
        "openai": '[\n{"role": "user", "content": "hi"},\n' + DEEP + "\n]",
        "pi": f"{PI_HEADER}\n{PI_USER}\n" + '{"type": "custom", "data": ' + DEEP + "}\n",
    }
    for name, text in texts.items():
        if format in ("auto", name):
            error = refused(text, format)
            assert error.reason == f"nested more than {MAX_JSON_DEPTH} levels deep", name
            expected = text[: text.index("[" * 50)].count("\n") + 1
            assert error.line == expected, (name, error)


def test_deep_tool_arguments_are_kept_verbatim_not_parsed() -> None:
    deep_arguments = "[" * 5000 + "]" * 5000
    text = json.dumps(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": deep_arguments},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
    )
    imported = parse_import(text, "openai")
    call = imported.entries[1].payload.content[0]
    assert call.arguments == {} and call.raw_arguments == deep_arguments


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_nan_and_infinity_in_usage_are_refused_with_their_line(literal: str) -> None:
    openai = '[\n{"role": "user", "content": "hi"},\n{"role": "assistant", "content": "x",\n"usage": {"prompt_tokens": LIT}}\n]'
    pi_answer = (
        '{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-10T09:00:04.000Z",'
        '"message":{"role":"assistant","content":[{"type":"text","text":"x"}],"provider":"p",'
        '"model":"m","usage":{"input":LIT,"output":1,"cacheRead":0,"cacheWrite":0,'
        '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop"}}'
    )
    texts = [
        (tangents_with("usage", '{"input_tokens": LIT}'), '"usage": {"input_tokens": LIT}'),
        (openai, '"usage"'),
        (f"{PI_HEADER}\n{PI_USER}\n{pi_answer}\n", pi_answer),
    ]
    for template, marker in texts:
        text = template.replace("LIT", literal)
        error = refused(text)
        assert error.reason == f"{literal} is not a number a session can hold"
        assert error.line == text[: text.index(marker.replace("LIT", literal))].count("\n") + 1


def test_a_lone_surrogate_in_a_title_is_replaced_with_a_note() -> None:
    document = json.loads(_document())
    document["session"]["title"] = "broken \ud800 title"
    text = json.dumps(document, indent=2)
    assert "\\ud800" in text
    imported = from_json_text(text)
    assert imported.info.title == "broken \ufffd title"
    line = text[: text.index("\\ud800")].count("\n") + 1
    assert imported.notes == (
        f"line {line}: 1 text(s) held a lone surrogate (half of a UTF-16 pair), replaced with U+FFFD",
    )


@pytest.mark.parametrize("format", ["openai", "pi"])
def test_lone_surrogates_in_messages_are_replaced(format: str) -> None:
    if format == "openai":
        text = '[{"role": "user", "content": "half \\udc00 a pair, whole \\ud83d\\ude00"}]'
    else:
        text = f"{PI_HEADER}\n" + PI_USER.replace(
            "hello", "half \\udc00 a pair, whole \\ud83d\\ude00"
        )
    imported = parse_import(text, format)
    assert imported.entries[-1].payload.text == "half \ufffd a pair, whole 😀"
    assert "replaced with U+FFFD" in imported.notes[0]


WHOLE = 10**MAX_DIGITS
finite_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-WHOLE + 1, WHOLE - 1)  # longer ones are refused: see below
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(codec="utf-8")),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=4), children, max_size=3)
    ),
    max_leaves=10,
)


@given(finite_json)
def test_a_json_reader_gives_back_what_json_holds(value) -> None:
    reader = JsonReader()
    assert reader.load(json.dumps(value)) == value
    assert reader.notes() == []


@given(st.integers(WHOLE, 10**4000) | st.integers(-(10**4000), -WHOLE))
def test_a_json_reader_refuses_an_integer_longer_than_any_count(value: int) -> None:
    with pytest.raises(FormatError, match="more than 20 digits"):
        JsonReader().load(f'[\n{{"n": {value}}}]')


@given(st.text(st.sampled_from('[]{}",:\\ud800 NaN1e999')) | st.text())
def test_a_json_reader_only_ever_refuses_in_words(text: str) -> None:
    try:
        JsonReader().load(text)
    except (json.JSONDecodeError, FormatError) as error:
        assert str(error)
