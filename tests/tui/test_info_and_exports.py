"""``/info`` shows the session's overview in a dialog; ``/export pi`` and
``/export html`` write the whole tree (real SQLite files, the demo provider)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.formats.overview import overview_text
from core.paths import default_db_path
from storage import SqliteStore
from tests.formats.sample import sample_session
from tests.tui.helpers import notifications, running, screen_text, send, settle
from tests.tui.sessions_seed import seed
from tui.chat.chat_screen import ChatScreen
from tui.screens.info import InfoScreen


async def bike_session():
    (bike,) = await seed(
        (
            "Fixing the bike",
            ["My chain skips", "Replace the chain.", "And the cassette?", "Check it too."],
            "2025-03-01T10:00:00.000000Z",
        ),
        branch=["Clean it first.", "ok", "Then oil it."],
    )
    return bike


async def test_info_shows_the_overview_and_closes_on_escape() -> None:
    bike = await bike_session()
    async with running(["--model", "demo", "--session", bike.id]) as pilot:
        await send(pilot, "/info")
        assert isinstance(pilot.app.screen, InfoScreen)
        text = screen_text(pilot)
        assert "Fixing the bike" in text and bike.id in text
        assert "branches 2" in text and "messages" in text
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)


async def test_info_at_80_columns_shows_every_word() -> None:
    """A line wider than the dialog (the tokens of a model) wraps; nothing is cut off."""
    sample = sample_session()
    store = await SqliteStore.open(default_db_path())
    try:
        await store.import_session(
            sample.info, sample.entries, sample.labels, list(sample.blobs.values())
        )
    finally:
        await store.close()
    async with running(["--model", "demo", "--session", sample.info.id], size=(80, 24)) as pilot:
        await send(pilot, "/info")
        info = pilot.app.screen
        assert isinstance(info, InfoScreen)
        body = info.query_one("#info-body")
        shown = []
        while True:
            shown += screen_text(pilot).split()
            if body.scroll_y >= body.max_scroll_y:
                break
            body.scroll_page_down(animate=False)
            await settle(pilot)
    missing = [word for word in overview_text(info.overview).split() if word not in shown]
    assert missing == []


async def test_export_pi_and_html_write_the_whole_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    bike = await bike_session()
    async with running(["--model", "demo", "--session", bike.id]) as pilot:
        await send(pilot, "/export pi")
        exported = tmp_path / "fixing-the-bike.pi.jsonl"
        assert f"Exported this session (pi) to {exported}" in notifications(pilot)
        await send(pilot, "/export html")
        page = (tmp_path / "fixing-the-bike.html").read_text()
        assert page.startswith("<!DOCTYPE html>") and "Then oil it." in page
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    texts = {
        block["text"]
        for line in lines
        if line["type"] == "message"
        for block in line["message"]["content"]
        if block["type"] == "text"
    }
    assert {"Replace the chain.", "Clean it first.", "Then oil it.", "Check it too."} <= texts
