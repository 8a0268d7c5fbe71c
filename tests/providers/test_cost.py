"""Cost per part from litellm's bundled price map, on both paths."""

from __future__ import annotations

import pytest
from fake_provider import Reply

from core.messages import Usage
from core.providers import cost, sdk
from core.providers.cost import cost_for

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
