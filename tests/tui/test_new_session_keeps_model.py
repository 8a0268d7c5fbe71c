"""ctrl+n keeps the model and endpoint of the session it came from (issue
32): an app started with ``-c`` on a local model opened the new session on
the default model (``openai/gpt-4o-mini`` when an OpenAI key is set)."""

from __future__ import annotations

import pytest
from fake_local_server import LocalServer

from tests.fake_provider import FakeProvider
from tests.tui.helpers import app_of, running, send, settle

MODEL = "openai/smollm2"


async def test_ctrl_n_after_continue_keeps_the_local_model_and_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000000000")  # default: gpt-4o-mini
    with FakeProvider(local=LocalServer("llama.cpp", 4_096)) as server:
        base = f"{server.base_url}/v1"
        async with running(["--model", MODEL, "--api-base", base]) as pilot:
            await send(pilot, "first question")
        async with running(["-c"]) as pilot:  # model and endpoint from the session
            assert app_of(pilot).conversation.model == MODEL
            first = app_of(pilot).conversation.session.id
            await pilot.press("ctrl+n")
            await settle(pilot)
            conversation = app_of(pilot).conversation
            assert conversation.session.id != first
            assert (conversation.model, conversation.api_base) == (MODEL, base)
            await send(pilot, "second question")
            assert conversation.session.path[-1].message.error is None
    asked = [r.body["model"] for r in server.requests if r.path.endswith("/chat/completions")]
    assert asked == ["smollm2", "smollm2"]
