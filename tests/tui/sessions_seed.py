"""Sessions written into the app's database before it opens (fixed times)."""

from __future__ import annotations

from dataclasses import replace

from core.paths import default_db_path
from core.sessions.content import TextContent
from core.sessions.entries import Entry
from core.sessions.messages import Message
from core.sessions.persistence import SessionInfo
from storage import SqliteStore

MODEL = "anthropic/claude-sonnet-4-5"


def _chain(session_id: str, texts: list[str], parent: str | None, start: int = 0) -> list[Entry]:
    """Alternating user and assistant messages (``start=1``: assistant first)."""
    entries = []
    for i, text in enumerate(texts, start):
        role = "user" if i % 2 == 0 else "assistant"
        fields = {"model": MODEL} if role == "assistant" else {}
        entry = Entry.new(
            session_id, parent, Message(role=role, content=(TextContent(text),), **fields)
        )
        entries.append(entry)
        parent = entry.id
    return entries


async def seed(
    *sessions: tuple[str | None, list[str], str], branch: list[str] | None = None
) -> list[SessionInfo]:
    """``(title, texts, updated_at)`` each; ``branch`` adds other answers to
    the last session's first message (its saved leaf stays on the first branch)."""
    store = await SqliteStore.open(default_db_path())
    infos = []
    try:
        for index, (title, texts, updated) in enumerate(sessions):
            info = SessionInfo(
                id=f"0000000{index}-0000-7000-8000-000000000000",
                title=title,
                created_at=updated,
                updated_at=updated,
            )
            entries = _chain(info.id, texts, None)
            if branch and index == len(sessions) - 1:
                entries += _chain(info.id, branch, entries[0].id, start=1)
                leaf = entries[len(texts) - 1].id
            else:
                leaf = entries[-1].id
            info = replace(info, leaf_id=leaf)
            await store.create_session(info, entries)
            infos.append(info)
    finally:
        await store.close()
    return infos
