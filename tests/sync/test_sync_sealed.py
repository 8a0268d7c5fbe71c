"""An encrypted sync folder (issue 34: optional encryption for cloud folders):
every journal line and image sealed with a key derived from a passphrase that
only the environment holds, so the folder holds no plain text and no key."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from pathlib import Path

import pytest

from core.sessions.content import ImageContent, TextContent
from core.sessions.entries import Entry
from core.sessions.messages import Message, user_text
from core.sessions.persistence import Blob
from core.sync.engine import SyncReport, sync_folder
from core.sync.seal import SealError
from tests.sync.machines import Machine
from tests.sync.test_sync_incremental import new_session, opened

SECRET = "the walrus sings at midnight"
PASSPHRASE = "correct horse battery staple"
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


async def sealed_sync(
    db: Path, folder: Path, device: str, passphrase: str | None = PASSPHRASE
) -> SyncReport:
    async with opened(db) as store:
        return await sync_folder(store, folder, device, passphrase=passphrase)


def test_two_devices_share_a_sealed_folder_and_it_holds_no_plain_text(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    a_db, b_db = tmp_path / "a.db", tmp_path / "b.db"

    async def scenario() -> None:
        async with opened(a_db) as store:
            info = await new_session(store, SECRET, "long " * 2000)
            await store.set_title(info.id, "walrus title")
            sha = hashlib.sha256(PNG).hexdigest()
            await store.put_blob(Blob(sha, "image/png", 1, 1, PNG))
            image = ImageContent("image/png", sha, 1, 1)
            picture = Entry.new(info.id, info.leaf_id, user_text("", (image,)))
            await store.append(info.id, [picture], picture.id)
        await sealed_sync(a_db, folder, "a")
        await sealed_sync(b_db, folder, "b")
        async with opened(b_db) as store:
            got = await store.get_session(info.id)
            assert got is not None and got.title == "walrus title"
            first = (await store.path(picture.id))[0].payload
            assert isinstance(first, Message) and isinstance(first.content[0], TextContent)
            assert first.content[0].text == SECRET
            assert await store.get_blob(sha) is not None
        # What a adds later is read from where b stopped, and opened the same way.
        async with opened(a_db) as store:
            more = Entry.new(info.id, picture.id, user_text(f"{SECRET}, again"))
            await store.append(info.id, [more], more.id)
        await sealed_sync(a_db, folder, "a")
        assert (await sealed_sync(b_db, folder, "b")).received_entries == 1
        unchanged = every_byte(folder)
        assert (await sealed_sync(b_db, folder, "b")).received_entries == 0
        assert every_byte(folder) == unchanged
        folder_bytes = every_byte(folder)
        for plain in (SECRET, "walrus", info.id, PASSPHRASE, "long long", sha):
            assert plain.encode() not in folder_bytes, plain
        assert PNG not in folder_bytes and base64.b64encode(PNG) not in folder_bytes

    asyncio.run(scenario())


def test_a_wrong_passphrase_or_none_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()

    async def scenario() -> None:
        async with opened(tmp_path / "a.db") as store:
            await new_session(store, SECRET)
        await sealed_sync(tmp_path / "a.db", folder, "a")
        for passphrase in ("wrong horse", None):
            with pytest.raises(SealError) as refused:
                await sealed_sync(tmp_path / "b.db", folder, "b", passphrase)
            assert "\n" not in str(refused.value)
        async with opened(tmp_path / "b.db") as store:
            assert await store.list_sessions() == []
        assert not (folder / "tangents" / "b").exists()

    asyncio.run(scenario())


def test_a_passphrase_for_a_folder_of_plain_journals_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()

    async def scenario() -> None:
        async with opened(tmp_path / "a.db") as store:
            await new_session(store, SECRET)
        await sealed_sync(tmp_path / "a.db", folder, "a", None)
        with pytest.raises(SealError):
            await sealed_sync(tmp_path / "b.db", folder, "b")

    asyncio.run(scenario())


def test_a_tampered_line_is_refused_in_one_line_and_the_rest_merges(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()

    async def scenario() -> None:
        async with opened(tmp_path / "a.db") as store:
            kept = await new_session(store, "kept")
            spoiled = await new_session(store, "spoiled")
        await sealed_sync(tmp_path / "a.db", folder, "a")
        journal = folder / "tangents" / "a" / "entries.jsonl"
        lines = journal.read_bytes().splitlines(keepends=True)
        last = json.loads(lines[-1])  # the entry of "spoiled"
        sealed = bytearray(base64.b64decode(last["sealed"]))
        sealed[-1] ^= 1
        last["sealed"] = base64.b64encode(bytes(sealed)).decode()
        journal.write_bytes(b"".join(lines[:-1]) + json.dumps(last).encode() + b"\n")
        report = await sealed_sync(tmp_path / "b.db", folder, "b")
        assert len(report.refused) == 1 and "\n" not in report.refused[0]
        assert "device a" in report.refused[0]
        async with opened(tmp_path / "b.db") as store:
            assert kept.leaf_id is not None and await store.get_entry(kept.leaf_id) is not None
            assert spoiled.leaf_id is not None and await store.get_entry(spoiled.leaf_id) is None

    asyncio.run(scenario())


def test_the_command_refuses_a_sealed_folder_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    a = Machine.make(tmp_path, "a", folder)
    b = Machine.make(tmp_path, "b", folder)
    a.ask(SECRET)
    sealed = {"MY_SYNC_KEY": PASSPHRASE}
    done = a.run("sync", "--folder", str(folder), "--key-env", "MY_SYNC_KEY", env=sealed)
    assert done.returncode == 0, done.stderr
    for args, env in (
        ((), {}),
        (("--key-env", "MY_SYNC_KEY"), {"MY_SYNC_KEY": "wrong"}),
        (("--key-env", "UNSET_SYNC_KEY"), {}),
    ):
        result = b.run("sync", "--folder", str(folder), *args, env=env)
        assert result.returncode != 0
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
    # The variable's name can come from the config instead.
    (b.home / "config.toml").write_text('[sync]\nkey_env = "MY_SYNC_KEY"\n')
    opened_b = b.run("sync", "--folder", str(folder), "--json", env=sealed)
    assert opened_b.returncode == 0, opened_b.stderr
    assert json.loads(opened_b.stdout)["received"]["sessions"] == 1
    assert SECRET.encode() not in every_byte(folder)
