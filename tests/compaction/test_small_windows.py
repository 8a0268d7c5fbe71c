"""Compaction on the small windows of local models, with default settings.

From issue #14: with ``context_windows = { "demo" = 3000 }`` and the default
``[compaction]``, 16 short messages gave "8 oldest message(s) were left out to
fit the context window" and no compaction entry: the provider's reported usage
(what it was sent after the safety net trimmed) hid how large the path had grown.
"""

from __future__ import annotations

import pytest
from fake_provider import Reply

from core.chat import run_turn
from core.compactor import NothingToCompact, compact
from core.context import estimate_tokens, estimated_tokens
from core.entries import Compaction
from core.messages import user_text
from core.providers import registry
from core.settings import Settings
from tests.compaction.builders import assistant
from tests.compaction.conftest import Rig

QUESTION = "message {i}: tell me more about the cat and the sea, with detail please"


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
        result = await run_turn(session, settings, model="demo")
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
        await compact(session, settings, model=rig.model, api_base=rig.api_base)
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
        await run_turn(session, settings, model="demo")
    before = estimated_tokens(session.context("demo").messages)
    entries_before = len(session.path)
    try:
        await compact(session, settings, model="demo")
    except NothingToCompact as error:
        assert "nothing to compact yet" in str(error)
        assert len(session.path) == entries_before
    else:
        assert estimated_tokens(session.context("demo").messages) < before
