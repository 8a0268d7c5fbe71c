"""Every request of a conversation goes by the target it decided (issue 31):
the summaries, a comparison and the window question take the conversation's
``Target`` rather than deciding again from a base URL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply

from core.chat.conversation import Conversation
from core.sessions.messages import user_text
from core.sessions.session import Session
from core.settings import Endpoint, Settings
from storage import SqliteStore


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "t.db")
    yield opened
    await opened.close()


def chats(server: FakeProvider) -> list[dict]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


async def test_summaries_and_comparisons_go_where_api_base_says(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--api-base`` against an ``[[endpoints]]`` entry serving the model and
    ``OPENAI_BASE_URL``: the compaction's and the branch summary's requests
    and every column of a comparison go to the ``--api-base`` server."""
    with FakeProvider() as named, FakeProvider() as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.base_url + "/v1")
        settings = Settings(
            retries=0, endpoints=(Endpoint("lab", other.base_url + "/v1", models=("qwen3",)),)
        )
        session = await Session.create(store, cwd="/")
        conversation = Conversation(
            session,
            settings,
            default_model="lab/qwen3",
            default_thinking="off",
            api_base=named.base_url + "/v1",
        )
        for i in range(3):
            await conversation.send(f"question {i}: " + "a long wall of old stones " * 40)
        first_answer = conversation.session.path[1].id
        named.script(Reply(text="the summary"))
        await conversation.compact()
        named.script(Reply(text="the branch"))
        old_leaf = conversation.session.leaf_id
        await conversation.move_to(first_answer)
        await conversation.summarize_branch(old_leaf, first_answer)
        await conversation.session.append(user_text("and now?"))
        await conversation.compare(["lab/qwen3", "openai/other"])
        assert chats(other) == []
        asked = chats(named)
        assert {b["model"] for b in asked} == {"qwen3", "other"}
        assert len(asked) == 3 + 1 + 1 + 2, "three replies, two summaries, two columns"
