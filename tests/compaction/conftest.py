"""Compaction end to end: a real SQLite store and the fake provider server,
reached through the real anthropic SDK or litellm."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_provider import FakeProvider

from core.chat.target import summarizer_for, target_for
from core.compaction.summarizer import Summarizer
from core.providers.target import Target
from core.sessions.session import Session
from core.settings import Settings
from storage import SqliteStore
from tests.context_texts import split_summaries


@dataclass
class Rig:
    """One provider path pointed at the fake server."""

    name: str
    model: str
    server: FakeProvider

    @property
    def api_base(self) -> str:
        return self.server.base_url if self.name == "anthropic" else self.server.base_url + "/v1"

    @property
    def target(self) -> Target:
        """Where the conversation would send :attr:`model`: the fake server."""
        return target_for(self.model, Settings(), self.api_base)

    def summarizer(self, settings: Settings) -> Summarizer:
        """Who summarises under ``settings``, as the conversation decides it."""
        return summarizer_for(self.model, self.target, settings)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.server.requests]


def sent_texts(body: dict[str, Any]) -> list[str]:
    """Every text the request carries after the system prompt, in order (either
    wire). A summary, sent in one user message with what follows it, is
    listed apart from it (without its end marker)."""
    return [piece for text in _sent_texts(body) for piece in split_summaries(text)]


def _sent_texts(body: dict[str, Any]) -> list[str]:
    texts: list[str] = []
    for message in body["messages"]:
        if message["role"] == "system":
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                texts.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                texts.extend(
                    [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner or []]
                )
    return texts


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if system is not None:
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    first = body["messages"][0]
    return first["content"] if first["role"] == "system" else ""


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "tangents.db")
    yield opened
    await opened.close()


@pytest.fixture
async def session(store: SqliteStore) -> Session:
    return await Session.create(store)


@pytest.fixture(params=["anthropic", "litellm"])
def rig(
    request: pytest.FixtureRequest, fake_provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> Rig:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000")
    model = "anthropic/claude-test" if request.param == "anthropic" else "openai/gpt-test"
    return Rig(request.param, model, fake_provider)
