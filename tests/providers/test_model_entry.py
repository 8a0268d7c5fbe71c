"""One model's entry of litellm's bundled table, found without parsing it whole."""

from __future__ import annotations

import json

import pytest

from core.providers.model_entry import bundled_table, entry_in, model_entry
from core.tokens import known_context_window


def test_every_entry_found_alone_is_the_entry_the_whole_table_holds() -> None:
    """Against the installed file, key by key: a litellm bump whose file the
    search would misread fails here, not in someone's footer."""
    path = bundled_table()
    assert path is not None, "litellm is installed with the test dependencies"
    raw = path.read_bytes()
    table = json.loads(raw)
    assert len(table) > 1000
    wrong = [name for name, entry in table.items() if entry_in(raw, name) != entry]
    assert wrong == []


@pytest.mark.parametrize(
    ("model", "entry"),
    [("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"), ("openai/gpt-4o", "gpt-4o")],
)
def test_a_known_window_is_the_tables(model: str, entry: str) -> None:
    path = bundled_table()
    assert path is not None
    whole = json.loads(path.read_bytes())[entry]
    assert known_context_window(model) == whole["max_input_tokens"]
    assert model_entry(entry) == whole


def test_a_name_the_table_lacks_has_no_entry() -> None:
    assert model_entry("nowhere/no-such-model-9000") is None


def encoded(text: str) -> bytes:
    return text.encode()


def test_a_string_value_equal_to_the_name_is_not_its_key() -> None:
    table = encoded('{"a": {"alias": "m", "x": 1},\n"m"  :\n {"max_input_tokens": 7}}')
    assert entry_in(table, "m") == {"max_input_tokens": 7}
    assert entry_in(encoded('{"a": {"alias": "m"}}'), "m") is None


def test_the_last_of_two_keys_wins_as_in_json_loads() -> None:
    text = '{"m": {"v": 1}, "m": {"v": 2}}'
    assert entry_in(encoded(text), "m") == json.loads(text)["m"] == {"v": 2}


def test_an_entry_longer_than_the_first_slice_is_read_whole() -> None:
    entry = {"notes": "é" * 40_000, "max_input_tokens": 9}
    table = json.dumps({"m": entry}, ensure_ascii=False).encode()
    assert entry_in(table, "m") == entry


def test_a_malformed_entry_is_none() -> None:
    assert entry_in(encoded('{"m": {"v": 1,'), "m") is None
