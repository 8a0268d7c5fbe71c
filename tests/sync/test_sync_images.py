"""Images travel as blobs named by their hash; an entry whose image has not
arrived yet waits for it (with its descendants) instead of losing it."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from pathlib import Path

from core.sessions.content import ImageContent, TextContent
from core.sessions.entries import Entry
from core.sessions.ids import now_iso, uuid7
from core.sessions.messages import Message, user_text
from core.sessions.persistence import Blob, SessionInfo
from storage.store import SqliteStore
from tests.sync.machines import Machine, entry_map

PIXELS = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
SHA = hashlib.sha256(PIXELS).hexdigest()


async def with_image(db: Path) -> str:
    store = await SqliteStore.open(db)
    try:
        await store.put_blob(Blob(SHA, "image/png", 16, 16, PIXELS))
        now = now_iso()
        info = SessionInfo(id=uuid7(), title="a picture", created_at=now, updated_at=now)
        first = Entry.new(info.id, None, user_text("before"))
        picture = Entry.new(
            info.id,
            first.id,
            Message("user", (ImageContent("image/png", SHA, 16, 16), TextContent("look"))),
        )
        after = Entry.new(info.id, picture.id, user_text("after"))
        await store.create_session(
            SessionInfo(**{**info.to_dict(), "leaf_id": after.id}), [first, picture, after]
        )
        return info.id
    finally:
        await store.close()


async def blob_in(db: Path) -> Blob | None:
    store = await SqliteStore.open(db)
    try:
        return await store.get_blob(SHA)
    finally:
        await store.close()


def test_an_image_arrives_with_its_entry_or_the_entry_waits(tmp_path: Path) -> None:
    a = Machine.make(tmp_path, "a", tmp_path / "shared")
    b = Machine.make(tmp_path, "b", tmp_path / "copied")
    session_id = asyncio.run(with_image(a.db))
    a.sync()
    device = next((a.folder / "tangents").iterdir()).name
    assert (a.folder / "tangents" / device / "blobs" / f"{SHA}.json").is_file()
    # The engine copied the journals but not the image yet.
    shutil.copytree(
        a.folder / "tangents", b.folder / "tangents", ignore=shutil.ignore_patterns("blobs")
    )
    report = b.sync()
    assert report["received"]["entries"] == 1 and report["waiting"] == 2
    shutil.copytree(
        a.folder / "tangents" / device / "blobs", b.folder / "tangents" / device / "blobs"
    )
    report = b.sync()
    assert report["received"]["entries"] == 2 and report["waiting"] == 0
    blob = asyncio.run(blob_in(b.db))
    assert blob is not None and blob.data == PIXELS
    assert entry_map(b.export(session_id)) == entry_map(a.export(session_id))
