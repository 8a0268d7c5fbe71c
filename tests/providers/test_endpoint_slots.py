"""Requests to one local server never overlap unless its ``[[endpoints]]``
entry says ``parallel = N`` (issue 32): a single-slot server cuts off the
request it answers when another comes (the fake counts how many it answered
at once, and how many it cut off)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_local_server import LocalServer

from core.chat.fanout import fan_out
from core.chat.target import target_for
from core.providers.base import ChatRequest, TextDelta
from core.providers.registry import get_provider
from core.providers.retry import stream_with_retry
from core.providers.slots import slots_for
from core.providers.window_probe import ask_by_refusal
from core.sessions.messages import user_text
from core.sessions.session import Session
from core.settings import ConfigError, Endpoint, Settings, load_settings
from storage import SqliteStore
from tests.fake_provider import FakeProvider, Reply

MODELS = ["lab/alpha", "lab/beta", "lab/gamma"]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "t.db")
    yield opened
    await opened.close()


def lab(server: FakeProvider, **parallel: int) -> Settings:
    endpoint = Endpoint("lab", server.base_url + "/v1", **parallel)
    return Settings(retries=0, endpoints=(endpoint,))


async def compare(store: SqliteStore, settings: Settings) -> list[str | None]:
    session = await Session.create(store, cwd="/")
    await session.append(user_text("What is in the garden?"))
    result = await fan_out(
        session, settings, MODELS, targets=lambda model: target_for(model, settings)
    )
    return [c.message.stop_reason if c.message else c.error for c in result.columns]


async def test_compare_asks_a_single_slot_server_one_model_at_a_time(store) -> None:
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider(local=local, chunk_delay=0.005) as server:
        assert await compare(store, lab(server)) == ["stop"] * 3
    assert (server.most_at_once, local.interrupted) == (1, 0)


async def test_parallel_n_lets_n_requests_run_at_once(store) -> None:
    with FakeProvider(local=LocalServer("llama.cpp", 4_096), chunk_delay=0.02) as server:
        assert await compare(store, lab(server, parallel=2)) == ["stop"] * 3
    assert server.most_at_once == 2


async def test_the_window_question_waits_for_the_running_reply() -> None:
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider(local=local) as server:
        settings = lab(server)
        target = target_for("lab/alpha", settings, None)
        slots = slots_for(target, settings)
        server.script(Reply(text="word " * 200, chunk_size=5, delay=0.005))
        request = ChatRequest(
            model=target.model,
            messages=(user_text("tell me"),),
            api_base=target.api_base,
            slots=slots,
        )
        text, question = "", None
        async for event in stream_with_retry(get_provider(target.model), request):
            if isinstance(event, TextDelta):
                text += event.text
                if question is None:  # the reply has begun: now the question
                    question = asyncio.ensure_future(ask_by_refusal(target, 3_000, slots))
        assert question is not None and await question == 4_096
    assert text == "word " * 200
    assert (server.most_at_once, local.interrupted) == (1, 0)


def test_hosted_providers_are_not_bounded_and_a_local_one_is() -> None:
    settings = Settings(endpoints=(Endpoint("lab", "http://127.0.0.1:8080/v1", parallel=3),))
    hosted = target_for("openai/gpt-4o", settings, None)
    assert slots_for(hosted, settings) is None
    bounded = slots_for(target_for("lab/qwen", settings, None), settings)
    assert bounded is not None and bounded.parallel == 3
    other = slots_for(target_for("openai/qwen", settings, "http://localhost:9/v1"), settings)
    assert other is not None and other.parallel == 1


def test_parallel_below_one_is_refused_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[[endpoints]]\nname = "lab"\nbase_url = "http://h/v1"\nparallel = 0\n')
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    assert len(refused.value.lines) == 1 and "parallel" in refused.value.lines[0]
    config.write_text('[[endpoints]]\nname = "lab"\nbase_url = "http://h/v1"\nparallel = 4\n')
    assert load_settings(config).endpoints[0].parallel == 4
