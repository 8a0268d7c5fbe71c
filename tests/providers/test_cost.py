"""Cost per part from litellm's bundled price map, on both paths."""

from __future__ import annotations

import marshal
import sys
from collections.abc import Mapping
from typing import Any

import pytest
from fake_provider import Reply

from core.providers import cost, sdk
from core.providers.cost import cost_for
from core.sessions.messages import Usage

USAGE = Usage(input_tokens=1000, output_tokens=500, cache_read_tokens=2000, cache_write_tokens=300)


@pytest.mark.parametrize(
    "model, key",
    [
        ("anthropic/claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("openai/gpt-4o", "gpt-4o"),
        ("gpt-4o", "gpt-4o"),
    ],
)
def test_cost_matches_the_price_map(model, key):
    prices = sdk.litellm().model_cost[key]
    priced = cost_for(model, USAGE)
    assert priced.input_cost == pytest.approx(1000 * prices["input_cost_per_token"])
    assert priced.output_cost == pytest.approx(500 * prices["output_cost_per_token"])
    assert priced.cache_read_cost == pytest.approx(2000 * prices["cache_read_input_token_cost"])
    write_price = prices.get("cache_creation_input_token_cost", prices["input_cost_per_token"])
    assert priced.cache_write_cost == pytest.approx(300 * write_price)
    assert priced.cost > 0
    assert (priced.input_tokens, priced.output_tokens) == (1000, 500)


def test_unknown_model_costs_nothing():
    priced = cost_for("nowhere/no-such-model-9000", USAGE)
    assert priced.cost == 0
    assert priced.input_tokens == 1000


def test_bundled_file_agrees_with_litellm_model_cost():
    """The file read directly is the table litellm prices with."""
    bundled = cost.price_table()
    loaded = sdk.litellm().model_cost
    for key in ("claude-sonnet-4-6", "claude-haiku-4-5", "gpt-4o"):
        for part in (
            "input_cost_per_token",
            "output_cost_per_token",
            "cache_read_input_token_cost",
        ):
            assert bundled[key][part] == loaded[key][part]


async def test_cost_reaches_the_message_on_every_path(wire):
    wire.server.script(
        Reply(
            text="priced",
            usage={"input_tokens": 1000, "output_tokens": 200, "cache_read_tokens": 0},
        )
    )
    result = await wire.run()
    usage = result.message.usage
    key = "claude-sonnet-4-6" if wire.name == "anthropic" else "gpt-4o"
    prices = sdk.litellm().model_cost[key]
    assert usage.input_cost == pytest.approx(1000 * prices["input_cost_per_token"])
    assert usage.output_cost == pytest.approx(200 * prices["output_cost_per_token"])
    assert usage.cost > 0


@pytest.fixture
def fresh_table(tmp_path, monkeypatch):
    """The table read anew, its marshal copy kept in ``tmp_path`` (written as
    bytecode is: this environment may say not to)."""
    monkeypatch.setattr(cost, "_COPY", tmp_path / "prices.marshal")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    cost._read_table.cache_clear()
    yield tmp_path / "prices.marshal"
    cost._read_table.cache_clear()


def read_anew() -> Mapping[str, Any]:
    cost._read_table.cache_clear()
    return cost.price_table()


def test_the_table_is_read_from_its_marshal_copy_while_litellms_file_is_unchanged(fresh_table):
    """Parsing litellm's JSON is ~20 ms of the first request's wait; its copy,
    each model's entry decoded when it is asked for, under 1."""
    table = read_anew()
    stamp, copied = marshal.loads(fresh_table.read_bytes())
    assert {model: marshal.loads(entry) for model, entry in copied.items()} == table
    marker = {"max_input_tokens": 1234}
    fresh_table.write_bytes(
        marshal.dumps((stamp, {**copied, "copy/marker": marshal.dumps(marker)}))
    )
    again = read_anew()
    assert again["copy/marker"] == marker and again.get("gpt-4o") == table["gpt-4o"]
    assert dict(again.items()) == {**table, "copy/marker": marker}
    assert len(again) == len(table) + 1 and again.get("no/such-model") is None


@pytest.mark.parametrize(
    "copy",
    [marshal.dumps(("another litellm", {"copy/marker": {}})), b"\x00damaged"],
    ids=["stale", "damaged"],
)
def test_a_stale_or_damaged_copy_is_made_again_from_litellms_file(fresh_table, copy):
    fresh_table.write_bytes(copy)
    table = read_anew()
    assert "copy/marker" not in table and "gpt-4o" in table
    copied = marshal.loads(fresh_table.read_bytes())[1]
    assert {model: marshal.loads(entry) for model, entry in copied.items()} == table


def test_where_python_writes_no_bytecode_no_copy_is_written(fresh_table, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert "gpt-4o" in read_anew()
    assert not fresh_table.exists()
