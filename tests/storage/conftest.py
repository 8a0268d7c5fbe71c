"""Storage tests run on real SQLite files in ``tmp_path``; nothing is mocked."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.sessions.content import TextContent
from core.sessions.entries import Entry
from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import Message
from core.sessions.persistence import SessionInfo
from storage import SqliteStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "tangents.db"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(db_path)
    yield opened
    await opened.close()


def message(text: str, role: str = "user", **fields) -> Message:
    return Message(role=role, content=(TextContent(text),), **fields)  # type: ignore[arg-type]


def session_info(title: str | None = None, **fields) -> SessionInfo:
    now = now_iso()
    return SessionInfo(id=uuid7(), title=title, created_at=now, updated_at=now, **fields)


async def new_session(store: SqliteStore, title: str | None = None, **fields) -> str:
    info = session_info(title, **fields)
    await store.create_session(info)
    return info.id


def chain(session_id: str, texts: list[str], parent: str | None = None) -> list[Entry]:
    """Alternating user/assistant entries, each the child of the one before."""
    entries = []
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        entry = Entry.new(session_id, parent, message(text, role))
        entries.append(entry)
        parent = entry.id
    return entries


async def add_chain(
    store: SqliteStore, session_id: str, texts: list[str], parent: str | None = None
) -> list[Entry]:
    entries = chain(session_id, texts, parent)
    await store.append(session_id, entries, entries[-1].id)
    return entries


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def pragma(store: SqliteStore, name: str):
    """A pragma's value on the store's own connection."""
    conn = store._conn
    return await conn._execute(lambda: conn._conn.execute(f"PRAGMA {name}").fetchone()[0])
