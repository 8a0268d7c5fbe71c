"""Property: any tree built by appends reads back like an in-memory model."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.sessions.entries import Entry
from storage import SqliteStore
from tests.storage.conftest import message, new_session


@st.composite
def trees(draw) -> tuple[list[int | None], list[int]]:
    """Parents by index (``None``: a root) and the sizes of the append batches."""
    size = draw(st.integers(1, 40))
    parents = [None] + [draw(st.none() | st.integers(0, i - 1)) for i in range(1, size)]
    batches = []
    left = size
    while left:
        batches.append(draw(st.integers(1, left)))
        left -= batches[-1]
    return parents, batches


async def check(path: Path, parents: list[int | None], batches: list[int]) -> None:
    store = await SqliteStore.open(path)
    try:
        session_id = await new_session(store)
        entries: list[Entry] = []
        for parent in parents:
            parent_id = None if parent is None else entries[parent].id
            role = "user" if len(entries) % 2 == 0 else "assistant"
            entries.append(Entry.new(session_id, parent_id, message(f"entry {len(entries)}", role)))
        start = 0
        for size in batches:
            batch = entries[start : start + size]
            await store.append(session_id, batch, batch[-1].id)
            start += size

        for i, entry in enumerate(entries):
            expected, node = [], i
            while node is not None:
                expected.append(entries[node])
                node = parents[node]
            path = await store.path(entry.id)
            assert path == expected[::-1]
            assert path[0].parent_id is None
            kids = [entries[j] for j, p in enumerate(parents) if p == i]
            assert await store.children(entry.id, session_id) == kids
        roots = [entries[j] for j, p in enumerate(parents) if p is None]
        assert await store.children(None, session_id) == roots
        assert await store.entries(session_id) == entries
        [summary] = await store.list_sessions()
        leaves = [i for i in range(len(entries)) if i not in parents]
        assert summary.branch_count == len(leaves)
        assert summary.message_count == len(entries)
        assert summary.info.leaf_id == entries[-1].id
    finally:
        await store.close()


@settings(max_examples=60, deadline=None)
@given(trees())
def test_paths_and_children_match_an_in_memory_tree(
    tree: tuple[list[int | None], list[int]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(check(Path(tmp) / "t.db", *tree))
