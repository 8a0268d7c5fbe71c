"""Labels on entries, and image bytes stored once per content hash."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from core.sessions.persistence import Blob
from storage import SqliteStore
from tests.storage.conftest import add_chain, new_session


async def test_labels_are_set_replaced_and_removed(store: SqliteStore) -> None:
    session_id = await new_session(store)
    first, second = await add_chain(store, session_id, ["q", "a"])
    await store.set_label(session_id, first.id, "start")
    await store.set_label(session_id, second.id, "answer")
    await store.set_label(session_id, second.id, "best answer")
    assert await store.labels(session_id) == {first.id: "start", second.id: "best answer"}
    await store.set_label(session_id, first.id, None)
    assert await store.labels(session_id) == {second.id: "best answer"}
    await store.set_label(session_id, first.id, None)  # removing twice is harmless


async def test_a_label_needs_an_entry_of_that_session(store: SqliteStore) -> None:
    a, b = await new_session(store), await new_session(store)
    [entry] = await add_chain(store, a, ["q"])
    with pytest.raises(KeyError):
        await store.set_label(b, entry.id, "wrong session")
    with pytest.raises(KeyError):
        await store.set_label(a, "missing", "no entry")
    assert await store.labels(a) == await store.labels(b) == {}


def blob(data: bytes, media_type: str = "image/png") -> Blob:
    return Blob(hashlib.sha256(data).hexdigest(), media_type, 4, 3, data)


async def test_blobs_are_deduplicated_by_hash(store: SqliteStore, db_path: Path) -> None:
    png = blob(b"\x89PNG fake pixels" * 100)
    await store.put_blob(png)
    await store.put_blob(png)
    await store.put_blob(blob(b"other"))
    assert await store.get_blob(png.sha256) == png
    assert await store.get_blob("0" * 64) is None
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM blobs").fetchone()[0] == 2


async def test_a_blob_whose_bytes_do_not_match_its_hash_is_rejected(store: SqliteStore) -> None:
    wrong = Blob("0" * 64, "image/png", 1, 1, b"pixels")
    with pytest.raises(ValueError):
        await store.put_blob(wrong)
    assert await store.get_blob(wrong.sha256) is None
