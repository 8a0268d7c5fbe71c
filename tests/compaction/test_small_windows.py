"""Compaction on the small windows of local models, with default settings.

From issue #14: with ``context_windows = { "demo" = 3000 }`` and the default
``[compaction]``, 16 short messages gave "8 oldest message(s) were left out to
fit the context window" and no compaction entry: the provider's reported usage
(what it was sent after the safety net trimmed) hid how large the path had grown.
"""

from __future__ import annotations

import pytest
from fake_provider import Fail, Reply

from core.chat.target import target_for
from core.chat.turn import run_turn
from core.compaction.run import NothingToCompact, compact
from core.compaction.summarizer import Summarizer
from core.providers import registry
from core.providers.target import Target
from core.sessions.context import estimate_tokens, estimated_tokens
from core.sessions.entries import Compaction
from core.sessions.messages import user_text
from core.settings import Settings
from tests.compaction.builders import assistant
from tests.compaction.conftest import Rig

QUESTION = "message {i}: tell me more about the cat and the sea, with detail please"

DEMO = Target("demo", None)
"""The demo answers in-process: no base URL."""


@pytest.mark.parametrize(("window", "turns"), [(3_000, 16), (4_096, 20), (8_192, 40)])
async def test_default_settings_compact_before_anything_is_dropped(
    session, window: int, turns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry._DEMO, "delay", 0)  # the demo's typing pace
    settings = Settings(context_windows={"demo": window})
    notes: list[str] = []
    largest = 0
    for i in range(turns):
        await session.append(user_text(QUESTION.format(i=i)))
        result = await run_turn(session, settings, model="demo", target=DEMO)
        assert result.error is None
        notes += result.notes
        largest = max(largest, sum(estimate_tokens(m) for m in result.context.messages))
    compactions = [e for e in session.path if isinstance(e.payload, Compaction)]
    assert compactions, f"no compaction on a {window}-token window"
    assert not [note for note in notes if "left out" in note], notes
    assert largest <= window


async def test_a_summary_longer_than_what_it_replaces_is_not_written(rig: Rig, session) -> None:
    await session.append(user_text("hi"))
    await session.append(assistant("Hello! How can I help?"))
    await session.append(user_text("what is 2+2?"))
    await session.append(assistant("4"))
    rig.server.script(Reply(text="SUMMARY " + "a long-winded summary " * 60))
    settings = Settings(retries=0)
    with pytest.raises(NothingToCompact, match="nothing to compact yet"):
        await compact(session, settings, model=rig.model, summarizer=rig.summarizer(settings))
    assert not [e for e in session.path if isinstance(e.payload, Compaction)]
    assert len(await session.store.entries(session.id)) == 4


@pytest.mark.parametrize("exchanges", [1, 2, 3])
async def test_a_manual_compaction_never_grows_the_context(
    session, exchanges: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From issue #14: ``/compact`` on a short chat kept everything and added a
    summary on top (426 -> 706 tokens)."""
    monkeypatch.setattr(registry._DEMO, "delay", 0)
    settings = Settings()
    for i in range(exchanges):
        await session.append(user_text(QUESTION.format(i=i)))
        await run_turn(session, settings, model="demo", target=DEMO)
    before = estimated_tokens(session.context("demo").messages)
    entries_before = len(session.path)
    try:
        await compact(session, settings, model="demo", summarizer=Summarizer("demo", DEMO))
    except NothingToCompact as error:
        assert "nothing to compact yet" in str(error)
        assert len(session.path) == entries_before
    else:
        assert estimated_tokens(session.context("demo").messages) < before


SERVER_OVERFLOWS = {
    "vllm": {
        "object": "error",
        "message": "This model's maximum context length is 4096 tokens. However, you requested"
        " 5036 tokens (4900 in the messages, 136 in the completion).",
        "type": "BadRequestError",
        "code": 400,
    },
    "llama-cpp-python": {
        "error": {
            "message": "Requested tokens (5036) exceed context window of 4096",
            "type": "invalid_request_error",
        }
    },
    "llama.cpp": {
        "error": {
            "code": 400,
            "message": "the request exceeds the available context size, try increasing it",
            "type": "exceed_context_size_error",
        }
    },
    "ollama": {"error": {"message": "prompt too long; exceeded max context length by 940 tokens"}},
    "lm-studio": {
        "error": "Trying to keep the first 5036 tokens when context the overflows. However, the"
        " model is loaded with context length of only 4096 tokens, which is not enough."
    },
}


@pytest.mark.parametrize("server", sorted(SERVER_OVERFLOWS))
async def test_overflow_in_each_servers_words_compacts_once_and_retries(
    server: str, fake_provider, monkeypatch: pytest.MonkeyPatch, session
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    for i in range(6):
        await session.append(user_text(f"u{i} " + "words about the garden " * 20))
        await session.append(assistant(f"a{i} " + "an answer about the garden " * 20))
    await session.append(user_text("the question"))
    fake_provider.script(
        Fail(400, body=SERVER_OVERFLOWS[server]), Reply(text="SUMMARY"), Reply(text="answered")
    )
    result = await run_turn(
        session,
        Settings(retries=2),
        model="openai/local",
        target=target_for("openai/local", Settings(), fake_provider.base_url + "/v1"),
    )
    assert result.error is None, result.error
    assert result.message.text == "answered"
    assert [e.payload.details["trigger"] for e in result.compactions] == ["overflow"]
    assert len(fake_provider.requests) == 3, "no retries of the same request"
