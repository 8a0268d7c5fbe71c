"""A server's refusal that names its window (issue 32), read, and asked for."""

from __future__ import annotations

from fake_local_server import LocalServer

from core.providers.target import Target
from core.providers.window_probe import ask_by_refusal, window_in_refusal
from tests.fake_provider import FakeProvider


def test_the_window_is_read_from_each_servers_words() -> None:
    assert window_in_refusal("Requested tokens (4125) exceed context window of 4096") == 4_096
    assert window_in_refusal("This model's maximum context length is 2048 tokens.") == 2_048
    assert window_in_refusal("the request exceeds the available context size") is None
    assert window_in_refusal("exceed context window of 0") is None
    assert window_in_refusal("exceed context window of 99999999999") is None


async def test_a_server_that_says_its_window_nowhere_names_it_when_it_refuses() -> None:
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider(local=local) as server:
        target = Target("openai/smollm2", server.base_url + "/v1", None)
        assert await ask_by_refusal(target, 5_000) == 4_096
        (asked,) = server.requests
    assert asked.body["max_tokens"] == 1 and asked.body["stream"] is False


async def test_a_server_that_answers_names_nothing() -> None:
    with FakeProvider(local=LocalServer("llama-cpp-python", 100_000)) as server:
        target = Target("openai/smollm2", server.base_url + "/v1", None)
        assert await ask_by_refusal(target, 5_000) is None
