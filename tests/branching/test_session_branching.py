"""Branching on a real SqliteStore: edits keep the old branch, forks trim, and a
branch summary made through the fake provider reaches the next request."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_provider import Reply

from core.branching.tree import SessionTree
from core.chat.branch_summary import BranchSummaryError, summarize_branch
from core.chat.target import target_for
from core.chat.turn import run_turn
from core.sessions.content import TextContent
from core.sessions.entries import BranchSummary, Compaction
from core.sessions.messages import Message
from core.sessions.session import Session
from core.settings import Settings
from storage import SqliteStore


def msg(text: str, role: str = "user") -> Message:
    return Message(role=role, content=(TextContent(text),))  # type: ignore[arg-type]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "tangents.db")
    yield opened
    await opened.close()


async def tree_of(session: Session) -> SessionTree:
    return SessionTree.from_entries(
        await session.store.entries(session.id), await session.labels(), session.leaf_id
    )


async def conversation(store: SqliteStore, *texts: str) -> tuple[Session, list]:
    session = await Session.create(store)
    entries = await session.append_many(
        [msg(t, "user" if i % 2 == 0 else "assistant") for i, t in enumerate(texts)]
    )
    return session, entries


async def test_editing_a_message_keeps_the_old_branch(store: SqliteStore) -> None:
    session, (q1, a1, q2, a2) = await conversation(store, "q1", "a1", "q2", "a2")
    await session.move_leaf(a1.id)  # edit q2: a sibling under a1
    q2b = await session.append(msg("q2 edited"))
    a2b = await session.append(msg("a2 edited", "assistant"))
    assert [m.text for m in session.messages()] == ["q1", "a1", "q2 edited", "a2 edited"]

    reopened = await Session.open(store, session.id)
    assert reopened.leaf_id == a2b.id
    tree = await tree_of(reopened)
    assert len(tree) == 6
    assert tree.siblings(q2b.id) == (1, 2) and tree.previous_sibling(q2b.id) == q2.id
    assert tree.deepest_leaf(q2.id) == a2.id
    assert [e.id for e in await store.path(a2.id)] == [q1.id, a1.id, q2.id, a2.id]
    assert [e.id for e in await reopened.siblings(q2b.id)] == [q2.id, q2b.id]

    # switching back to the old sibling lands on its newest leaf
    await reopened.move_leaf(tree.deepest_leaf(tree.previous_sibling(q2b.id)))
    assert [m.text for m in reopened.messages()] == ["q1", "a1", "q2", "a2"]


async def test_labels_show_in_the_tree(store: SqliteStore) -> None:
    session, (q1, a1) = await conversation(store, "q1", "a1")
    await session.set_label(q1.id, "start")
    tree = await tree_of(session)
    rows = tree.rows("labelled")
    assert [(r.entry_id, r.label) for r in rows] == [(q1.id, "start")]


async def test_fork_whole_path_and_trimmed(store: SqliteStore) -> None:
    session, entries = await conversation(store, "q1", "a1", "q2", "a2", "q3", "a3")
    whole = await session.fork(entries[3].id)
    assert [m.text for m in whole.messages()] == ["q1", "a1", "q2", "a2"]
    assert (whole.info.parent_session_id, whole.info.parent_entry_id) == (session.id, entries[3].id)

    trimmed = await session.fork(entries[-1].id, first_k=1, last_n=2)
    assert [m.text for m in trimmed.messages()] == ["q1", "q3", "a3"]
    reopened = await Session.open(store, trimmed.id)
    assert [m.text for m in reopened.messages()] == ["q1", "q3", "a3"]
    assert reopened.info.parent_session_id == session.id
    # the source session is untouched
    assert len(await store.entries(session.id)) == 6


async def test_a_fork_keeps_what_a_compaction_on_its_path_keeps(store: SqliteStore) -> None:
    """The copied compaction keeps from the copy of its first kept entry: the
    fork's context is the source's (it lost the kept messages before)."""
    session, (q1, a1, q2, a2) = await conversation(store, "q1", "a1", "q2", "a2")
    await session.append(Compaction("they said q1 and a1", q2.id, 100))
    await session.append_many([msg("q3"), msg("a3", "assistant")])

    fork = await Session.open(store, (await session.fork(session.leaf_id)).id)

    texts = [[b.text for b in m.content] for m in fork.context("demo").messages]
    assert texts == [[b.text for b in m.content] for m in session.context("demo").messages]
    sent = [text for message in texts for text in message]
    assert "q2" in sent and "a2" in sent  # (q2 in the summary's user turn)
    [compaction] = [e for e in fork.path if isinstance(e.payload, Compaction)]
    assert compaction.payload.first_kept_id == next(
        e.id for e in fork.path if e.message and e.message.text == "q2"
    )


@pytest.fixture
def anthropic_env(fake_provider, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_provider.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdef")
    return fake_provider


async def test_branch_summary_is_appended_and_sent_with_the_next_turn(
    store: SqliteStore, anthropic_env
) -> None:
    fake = anthropic_env
    settings = Settings(retries=0)
    session, (q1, a1, q2, a2) = await conversation(
        store, "q1", "a1", "try the risky plan", "the plan crashed"
    )
    await session.move_leaf(a1.id)
    fake.script(Reply(text="- The user tried the risky plan; it failed."))
    summary = await summarize_branch(
        session,
        settings,
        model="anthropic/x",
        old_leaf_id=a2.id,
        new_entry_id=a1.id,
        target=target_for("anthropic/x", settings),
    )
    assert isinstance(summary.payload, BranchSummary)
    assert summary.payload.from_id == q2.id
    assert summary.payload.summary == "- The user tried the risky plan; it failed."
    assert summary.parent_id == a1.id and session.leaf_id == summary.id
    asked = str(fake.last_request.body)
    assert "try the risky plan" in asked and "the plan crashed" in asked and "q1" not in asked

    await session.append(msg("try the safe plan"))
    result = await run_turn(
        session, settings, model="anthropic/x", target=target_for("anthropic/x", settings)
    )
    assert result.error is None
    sent = str(fake.last_request.body)
    assert "explored another branch" in sent
    assert "The user tried the risky plan" in sent
    assert "try the safe plan" in sent and "the plan crashed" not in sent


async def test_nothing_to_summarize(store: SqliteStore) -> None:
    session, (q1, a1) = await conversation(store, "q1", "a1")
    with pytest.raises(BranchSummaryError):
        await summarize_branch(
            session,
            Settings(retries=0),
            model="anthropic/x",
            old_leaf_id=a1.id,
            new_entry_id=a1.id,
            target=target_for("anthropic/x", Settings()),
        )
