"""The app sends where print mode does (issues 31 and 32): ``--api-base``
wins over an ``[[endpoints]]`` entry's ``base_url``."""

from __future__ import annotations

from pathlib import Path

from fake_provider import FakeProvider, Reply

from tests.tui.helpers import app_of, running, send


async def test_api_base_wins_over_the_configured_endpoint_in_the_app(tmp_path: Path) -> None:
    with FakeProvider() as configured, FakeProvider() as named:
        named.script(Reply(text="from the named server"))
        config = tmp_path / "config.toml"
        config.write_text(
            f'[[endpoints]]\nname = "lab"\nbase_url = "{configured.base_url}/v1"\n'
            'models = ["qwen3"]\n'
        )
        argv = ["--config", str(config), "-m", "lab/qwen3", "--api-base", f"{named.base_url}/v1"]
        async with running(argv) as pilot:
            await send(pilot, "hello")
            reply = app_of(pilot).conversation.session.path[-1].message
            assert reply is not None and reply.text == "from the named server"
        chats = [r for r in configured.requests if r.path.endswith("/chat/completions")]
        assert chats == []
