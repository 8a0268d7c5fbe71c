"""Fixtures for the compare tests: a real SQLite store, a session holding a
question, keys for the fake provider's two wire formats."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.sessions.messages import user_text
from core.sessions.session import Session
from storage import SqliteStore


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000000000")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000000000")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "tangents.db")
    yield opened
    await opened.close()


@pytest.fixture
async def asked(store: SqliteStore) -> Session:
    """A session whose path ends with a question."""
    session = await Session.create(store)
    await session.append(user_text("What is 2+2?"))
    return session
