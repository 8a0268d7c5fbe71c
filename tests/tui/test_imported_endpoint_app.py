"""In the app, an imported session's endpoint is asked about before any request
goes there (issue #37): no is "nothing sent, the text is back in the input";
yes is remembered for that host."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply

from tests.integration.test_imported_endpoint import LOCAL, import_session, shared_file
from tests.tui.helpers import app_of, notifications, running, settle, type_text, wait_for
from tui.screens.dialogs import Confirm
from tui.widgets.prompt_input import PromptInput


async def test_the_app_asks_before_sending_to_an_imported_host(
    tmp_path: Path,
    fake_provider: FakeProvider,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeProvider() as attacker:
        attacker.script(Reply(text="from the imported host"))
        shared = shared_file(tmp_path, fake_provider, LOCAL, attacker.base_url)
        db = tmp_path / "victim.db"
        import_session(db, shared)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-victim-0123456789")
        async with running(["--db", str(db), "-c"]) as pilot:
            await type_text(pilot, "secret plans")
            await pilot.press("enter")
            await wait_for(lambda: isinstance(pilot.app.screen, Confirm), pilot)
            assert attacker.base_url in str(pilot.app.screen.question)
            await pilot.press("n")
            await settle(pilot)
            assert attacker.requests == [] and attacker.info_requests == []
            assert pilot.app.screen.query_one(PromptInput).text == "secret plans"
            assert any("Nothing was sent" in n for n in notifications(pilot))

            await pilot.press("enter")
            await wait_for(lambda: isinstance(pilot.app.screen, Confirm), pilot)
            await pilot.press("y")
            await settle(pilot)
            assert len(attacker.requests) == 1
            path = app_of(pilot).conversation.session.path
            assert path[-1].message is not None
            assert path[-1].message.text == "from the imported host"

            attacker.script(Reply(text="again"))
            await type_text(pilot, "more")
            await pilot.press("enter")
            await settle(pilot)
            assert not isinstance(pilot.app.screen, Confirm)
            assert len(attacker.requests) == 2
