"""Sync in the app (issue 34): ``[sync] auto`` syncs at launch, after each
saved reply and, bounded, at quit; ``/sync`` runs one; the footer says how
the syncs stand. Two "machines": the app's database (this test's home) and
machine B (its own home, the real ``tangents``), sharing one real folder."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from core.paths import default_db_path
from core.sessions.session import Session
from storage.store import SqliteStore
from tests.sync.machines import Machine
from tests.sync.test_sync_git import clones, git_env
from tests.tui.helpers import (
    app_of,
    notifications,
    running,
    screen_text,
    send,
    type_text,
    wait_for,
)
from tui.chat.chat_screen import ChatScreen
from tui.cli import build_parser
from tui.modes.launch import build_app, prepare_launch
from tui.widgets.branch_bar import arrows_text
from tui.widgets.prompt_input import PromptInput

SYNC_WAIT = 120.0
"""Seconds a sync may take on a loaded machine (each opens its database)."""


def configure(folder: Path, **more: object) -> None:
    lines = [f"folder = {json.dumps(str(folder))}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in more.items()]
    config = Path(os.environ["TANGENTS_HOME"]) / "config.toml"
    config.write_text("[sync]\n" + "\n".join(lines) + "\n")


def machine_b(tmp_path: Path) -> Machine:
    return Machine.make(tmp_path, "b", tmp_path / "shared")


def last_sync(pilot):
    """How the latest sync ended (None before any)."""
    syncs = app_of(pilot).syncs
    assert syncs is not None
    return syncs.syncs.last


async def synced(pilot, before=None):
    """Wait until a sync other than ``before`` has ended and none runs; how it ended."""
    syncs = app_of(pilot).syncs
    assert syncs is not None
    await wait_for(
        lambda: syncs.syncs.last not in (None, before) and not syncs.syncs.running,
        pilot,
        timeout=SYNC_WAIT,
    )
    return syncs.syncs.last


async def session_ids() -> set[str]:
    store = await SqliteStore.open(default_db_path())
    try:
        return {s.info.id for s in await store.list_sessions()}
    finally:
        await store.close()


async def test_auto_syncs_at_launch_and_after_each_saved_reply(tmp_path: Path) -> None:
    b = machine_b(tmp_path)
    from_b = b.ask("written on b")
    b.sync()
    configure(b.folder, auto=True)
    async with running() as pilot:
        at_launch = await synced(pilot)
        assert at_launch.report is not None, at_launch.error
        assert at_launch.report.received_entries == 3
        assert from_b in await session_ids()
        assert "synced just now" in screen_text(pilot)
        await send(pilot, "written on a")
        after_reply = await synced(pilot, at_launch)
        assert after_reply.report is not None, after_reply.error
        assert after_reply.report.sent_entries == 3
        mine = app_of(pilot).conversation.session.id
    report = b.sync()
    assert report["received"] == {"sessions": 1, "entries": 3}
    assert mine in b.session_ids()


async def test_without_auto_nothing_syncs_until_slash_sync(tmp_path: Path) -> None:
    b = machine_b(tmp_path)
    from_b = b.ask("written on b")
    b.sync()
    configure(b.folder)
    async with running() as pilot:
        await send(pilot, "written on a")
        assert app_of(pilot).syncs.syncs.last is None  # type: ignore[union-attr]
        assert from_b not in await session_ids()
        await send(pilot, "/sync")
        await wait_for(lambda: any("Synced:" in n for n in notifications(pilot)), pilot)
        line = next(n for n in notifications(pilot) if "Synced:" in n)
        assert line == "Synced: sent 3 entries in 1 session, received 3 entries in 1 session."
        assert from_b in await session_ids()


async def test_slash_sync_errors_are_one_line(tmp_path: Path) -> None:
    async with running() as pilot:
        await send(pilot, "/sync")
        await wait_for(lambda: any("No sync folder" in n for n in notifications(pilot)), pilot)
    configure(tmp_path / "missing")
    async with running(size=(80, 24)) as pilot:
        await send(pilot, "/sync")
        await wait_for(lambda: any("Sync failed" in n for n in notifications(pilot)), pilot)
        line = next(n for n in notifications(pilot) if "Sync failed" in n)
        assert line == f"Sync failed: {tmp_path / 'missing'}: not a directory"
        footer = screen_text(pilot).rstrip("\n").splitlines()[-1]
        assert "sync failed" in footer, footer
        assert "f1 help" in footer and "demo" in footer, footer


async def test_slash_sync_opens_an_encrypted_folder_with_the_passphrase_from_key_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = machine_b(tmp_path)
    from_b = b.ask("written on b")
    sealed = b.run(
        "sync", "--folder", str(b.folder), "--key-env", "SYNC_KEY", env={"SYNC_KEY": "s3cret"}
    )
    assert sealed.returncode == 0, sealed.stderr
    configure(b.folder, key_env="SYNC_KEY")
    async with running() as pilot:
        await send(pilot, "/sync")
        await wait_for(lambda: any("Sync failed" in n for n in notifications(pilot)), pilot)
        assert "Sync failed: SYNC_KEY is not set" in " ".join(notifications(pilot))
        monkeypatch.setenv("SYNC_KEY", "s3cret")
        await send(pilot, "/sync")
        await wait_for(
            lambda: any("Synced:" in n for n in notifications(pilot)), pilot, timeout=SYNC_WAIT
        )
        assert from_b in await session_ids()


async def test_a_session_continued_elsewhere_shows_both_continuations_while_open(
    tmp_path: Path,
) -> None:
    """Entries synced into the open session show as alternatives at once; the
    open session goes on from where it is here. Opened again, the same."""
    b = machine_b(tmp_path)
    configure(b.folder, auto=True)
    async with running() as pilot:
        at_launch = await synced(pilot)
        await send(pilot, "the start")
        first = await synced(pilot, at_launch)
        session_id = app_of(pilot).conversation.session.id
        b.sync()
        b.ask("continued on b", "--session", session_id)
        b.sync()
        await send(pilot, "continued on a")
        received = await synced(pilot, first)
        assert received.report is not None and received.report.received_entries == 2

        def arrows() -> str:
            screen = pilot.app.screen
            assert isinstance(screen, ChatScreen)
            mine = next(
                e for e in screen.session.path if e.message and e.message.text == "continued on a"
            )
            info = screen.branches.branch_info(mine.id)
            return "" if info is None else arrows_text(info)

        await wait_for(lambda: "the start · 2 branches" in screen_text(pilot), pilot, timeout=30)
        assert arrows() == "◀ 2/2 ▶"
        assert (
            app_of(pilot)
            .conversation.session.path[-1]
            .message.text.count('You said: "continued on a"')
            == 1
        )
        store = app_of(pilot).conversation.session.store
        app_of(pilot).open_session(await Session.open(store, session_id))
        await wait_for(lambda: "the start · 2 branches" in screen_text(pilot), pilot, timeout=30)
        assert arrows() == "◀ 2/2 ▶"


async def test_the_picker_marks_sessions_that_came_from_another_machine(tmp_path: Path) -> None:
    b = machine_b(tmp_path)
    b.ask("written on b")
    b.sync()
    configure(b.folder, auto=True)
    async with running(size=(110, 30)) as pilot:
        await synced(pilot)
        await send(pilot, "written on a")
        await synced(pilot)
        await pilot.press("ctrl+o")
        await wait_for(lambda: "written on b" in screen_text(pilot), pilot, timeout=30)
        rows = [line for line in screen_text(pilot).splitlines() if "msg" in line]
        from_b = next(row for row in rows if "written on b" in row)
        from_a = next(row for row in rows if "written on a" in row)
        assert f"from {b.device()} just now" in from_b, rows
        assert "from " not in from_a, rows


async def test_a_quit_never_waits_long_for_a_slow_remote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote that takes pushes only when told: the quit is cut short and
    says so in one line; the sync ends later, and nothing is lost."""
    remote, a, _ = clones(tmp_path)
    for name, value in git_env(tmp_path).items():
        if name != "HOME":
            monkeypatch.setenv(name, value)
    release = tmp_path / "release"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f'#!/bin/sh\nwhile [ ! -e "{release}" ]; do sleep 0.05; done\n')
    hook.chmod(0o755)
    here = Machine(Path(os.environ["TANGENTS_HOME"]), a.folder)
    here.ask("kept")
    configure(a.folder, auto=True, quit_wait=0.2)
    args = build_parser().parse_args(["--model", "demo"])
    app, store = await build_app(args, prepare_launch(args))
    try:
        async with app.run_test() as pilot:
            await wait_for(lambda: app.syncs is not None and app.syncs.syncs.running, pilot)
            await type_text(pilot, "typed while it syncs")  # keys echo: the sync is not in the way
            prompt = pilot.app.screen.query_one(PromptInput)
            await wait_for(lambda: prompt.text == "typed while it syncs", pilot)
            assert app.syncs.syncs.running
        line = await asyncio.wait_for(app.sync_at_quit(), SYNC_WAIT)
        assert line == "The sync at quit was cut short after 0.2 s; the next sync sends the rest."
        release.touch()
        syncs = app.syncs
        assert syncs is not None
        deadline = asyncio.get_running_loop().time() + SYNC_WAIT
        while syncs.syncs.running:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        assert syncs.syncs.last is not None and syncs.syncs.last.report is not None
    finally:
        await store.close()
