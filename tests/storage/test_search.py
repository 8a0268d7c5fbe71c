"""Full-text search across sessions: ranking, highlight markers, safe queries."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from core.sessions.content import TextContent, ToolResultContent
from core.sessions.entries import BranchSummary, Entry
from core.sessions.messages import Message
from storage import SqliteStore
from storage.fts import match_query
from tests.storage.conftest import add_chain, message, new_session


async def test_hits_carry_session_title_and_marked_snippet(store: SqliteStore) -> None:
    session_id = await new_session(store, "Trees")
    _, answer = await add_chain(
        store, session_id, ["tell me about oak", "The oak is a tree with acorns."]
    )
    [hit] = await store.search("acorns")
    assert (hit.session_id, hit.entry_id, hit.title) == (session_id, answer.id, "Trees")
    assert hit.snippet == "The oak is a tree with \x02acorns\x03."
    assert hit.updated_at == (await store.get_session(session_id)).updated_at  # type: ignore[union-attr]


async def test_better_matches_rank_first(store: SqliteStore) -> None:
    session_id = await new_session(store)
    await add_chain(
        store,
        session_id,
        [
            "a long message that mentions rust only once among many other words here and there",
            "rust rust rust",
            "nothing relevant",
        ],
    )
    hits = await store.search("rust")
    assert [h.snippet.count("\x02") for h in hits] == [3, 1]
    assert hits[0].rank < hits[1].rank
    assert len(await store.search("rust", limit=1)) == 1


async def test_every_word_must_match_and_the_last_is_a_prefix(store: SqliteStore) -> None:
    session_id = await new_session(store)
    await add_chain(store, session_id, ["compaction keeps summaries", "branching keeps history"])
    assert len(await store.search("keeps")) == 2
    assert len(await store.search("keeps summ")) == 1
    assert await store.search("summ keeps") == []  # only the last word is a prefix
    assert len(await store.search("Compaction")) == 1  # case-insensitive


async def test_tool_results_are_searchable_but_notes_and_summaries_are_not(
    store: SqliteStore,
) -> None:
    session_id = await new_session(store)
    [root] = await add_chain(store, session_id, ["run it"])
    result = Entry.new(
        session_id,
        root.id,
        Message("tool_result", (ToolResultContent("call-1", (TextContent("exit status zebra"),)),)),
    )
    note = Entry.new(session_id, result.id, message("zebra note", "custom"))
    summary = Entry.new(session_id, note.id, BranchSummary(None, "zebra summary"))
    await store.append(session_id, [result, note, summary], summary.id)
    assert [h.entry_id for h in await store.search("zebra")] == [result.id]


async def test_marker_characters_in_text_never_look_like_highlights(store: SqliteStore) -> None:
    session_id = await new_session(store)
    await add_chain(store, session_id, ["fake \x02marker\x03 and a real word"])
    [hit] = await store.search("real")
    assert hit.snippet.count("\x02") == hit.snippet.count("\x03") == 1


async def test_deleted_sessions_vanish_from_search(store: SqliteStore) -> None:
    doomed, kept = await new_session(store), await new_session(store)
    await add_chain(store, doomed, ["walrus in doomed"])
    await add_chain(store, kept, ["walrus in kept"])
    await store.delete_session(doomed)
    assert [h.session_id for h in await store.search("walrus")] == [kept]


NASTY = [
    'foo"bar (',
    '"',
    "((",
    "AND",
    "OR NOT",
    "NEAR(a b)",
    "a:b",
    "*",
    "^x",
    "-",
    "col:",
    "'",
    "",
    "   ",
    "\x00",
]


async def test_nasty_queries_never_raise(store: SqliteStore) -> None:
    session_id = await new_session(store)
    await add_chain(store, session_id, ['foo"bar ( AND OR NOT near(a b) a:b'])
    for query in NASTY:
        await store.search(query)
    assert len(await store.search('foo"bar (')) == 1
    assert len(await store.search("AND")) == 1  # operators are plain words
    assert await store.search("") == []


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_makes_a_valid_query(text: str) -> None:
    query = match_query(text)
    if query is None:
        assert not text.replace("\x00", " ").split()
        return
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2')"
    )
    conn.execute("INSERT INTO f VALUES (?)", (text,))
    conn.execute("SELECT * FROM f WHERE f MATCH ?", (query,)).fetchall()


async def test_only_the_newest_matches_are_ranked_when_there_are_many(
    store: SqliteStore, monkeypatch
) -> None:
    """Ranking every match of a common word is slow; past RANK_WINDOW matches,
    the newest RANK_WINDOW are ranked."""
    from storage import reads

    monkeypatch.setattr(reads, "RANK_WINDOW", 3)
    session_id = await new_session(store)
    texts = ["oak oak oak oak", "oak and more words", "an oak", "oak tree", "last oak here"]
    entries = await add_chain(store, session_id, texts)
    hits = await store.search("oak")
    assert {h.entry_id for h in hits} == {e.id for e in entries[2:]}, (
        "the oldest, best match is out of the window"
    )
    assert len(await store.search("oak oak")) == 3
    monkeypatch.setattr(reads, "RANK_WINDOW", 10)
    assert (await store.search("oak"))[0].entry_id == entries[0].id
