"""Steps shared by the branching tests: a chat on the fake provider, focusing a
message, and reading back what was saved."""

from __future__ import annotations

import os
from pathlib import Path

from fake_provider import Reply

from core.branching.tree import SessionTree
from core.sessions.session import Session
from storage import SqliteStore
from tests.tui.helpers import app_of, send, settle
from tui.widgets.branch_bar import BranchBar

FAKE_KEY = "sk-test-0123456789abcdefghij"


def write_config(summary: str) -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(
        f'branch_summary = "{summary}"\n'
    )


def session(pilot) -> Session:
    return app_of(pilot).conversation.session


def texts(pilot) -> list[str]:
    return [m.text for m in session(pilot).messages()]


def entry_with(pilot, text: str):
    return next(e for e in session(pilot).path if e.message is not None and e.message.text == text)


async def chat(pilot, fake, *turns: tuple[str, str]) -> None:
    for question, answer in turns:
        fake.script(Reply(text=answer))
        await send(pilot, question)


async def focus(pilot, text: str) -> None:
    await pilot.app.screen.chat_view.focus_entry(entry_with(pilot, text).id)
    await settle(pilot)


async def whole_tree(pilot) -> SessionTree:
    s = session(pilot)
    return SessionTree.from_entries(await s.store.entries(s.id), await s.labels(), s.leaf_id)


async def stored_path(pilot) -> list[str]:
    """The messages of the leaf as a fresh connection to the database sees them."""
    store = await SqliteStore.open(session(pilot).store.db_path)
    try:
        reopened = await Session.open(store, session(pilot).id)
        return [m.text for m in reopened.messages()]
    finally:
        await store.close()


def bar_text(widget) -> str:
    bars = widget.query(BranchBar)
    return str(bars.first().render()) if bars and bars.first().display else ""
