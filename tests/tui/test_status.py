"""The footer, thinking visibility and level, and the model picker."""

from __future__ import annotations

import json
import os
from pathlib import Path

from fake_provider import Reply

from tests.tui.helpers import app_of, running, screen_text, send, settle, type_text, wait_for
from tui.chat.chat_screen import ChatScreen
from tui.screens.model_picker import ModelPicker
from tui.widgets.footer import StatusFooter, context_text, format_cost, format_tokens


def footer(pilot):
    return pilot.app.screen.query_one(StatusFooter).state


async def test_footer_shows_model_thinking_context_tokens_and_cost(
    fake_provider, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    argv = ["--model", "openai/gpt-4o", "--api-base", f"{fake_provider.base_url}/v1"]
    fake_provider.script(
        Reply(text="one", usage={"input_tokens": 1000, "output_tokens": 200}),
        Reply(text="two", usage={"input_tokens": 3000, "output_tokens": 500}),
    )
    async with running(argv) as pilot:
        await send(pilot, "first")
        await send(pilot, "second")
        state = footer(pilot)
        assert state.window == 128_000
        assert state.context_tokens == 3500
        assert state.tokens == 4700
        assert state.cost > 0
        text = screen_text(pilot)
        assert "openai/gpt-4o" in text and "thinking off" in text
        assert "ctx 3.5k/128k (3%)" in text
        assert "4.7k tok" in text


async def test_demo_is_labelled_offline_with_the_window_compaction_uses() -> None:
    async with running([]) as pilot:
        await send(pilot, "hi")
        assert "demo (offline) │ thinking off │ ctx " in screen_text(pilot)
        assert footer(pilot).window == 32_768


def test_footer_formats() -> None:
    assert [format_tokens(n) for n in (0, 999, 1234, 12_345, 200_000, 1_000_000, 1_500_000)] == [
        "0",
        "999",
        "1.2k",
        "12k",
        "200k",
        "1M",
        "1.5M",
    ]
    assert format_cost(0.001234) == "$0.0012" and format_cost(12.5) == "$12.50"
    assert context_text(None, None) == "ctx 0/?"
    assert context_text(50_000, 200_000) == "ctx 50k/200k (25%)"


async def test_toggle_thinking_hides_thinking_and_is_remembered() -> None:
    async with running([]) as pilot:
        view = pilot.app.screen.chat_view
        assert view.show_thinking is True
        await pilot.press("ctrl+t")
        assert view.show_thinking is False
        state = json.loads((Path(os.environ["TANGENTS_HOME"]) / "state.json").read_text())
        assert state == {"show_thinking": False}
    async with running([]) as pilot:
        assert pilot.app.screen.chat_view.show_thinking is False
        await pilot.press("ctrl+t")
        assert pilot.app.screen.chat_view.show_thinking is True


async def test_thinking_level_cycles_and_applies_to_the_next_message() -> None:
    async with running([]) as pilot:
        levels = []
        for _ in range(5):
            await pilot.press("shift+tab")
            levels.append(app_of(pilot).conversation.thinking)
        assert levels == ["low", "medium", "high", "off", "low"]
        assert "thinking low" in screen_text(pilot)
        await send(pilot, "hi")
        change = next(
            e.payload for e in app_of(pilot).conversation.session.path if e.type == "model_change"
        )
        assert (change.model, change.thinking) == ("demo", "low")


async def test_model_picker_lists_models_with_keys_and_picks_one(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    async with running(["--model", "demo"]) as pilot:
        await pilot.press("ctrl+l")
        picker = pilot.app.screen
        assert isinstance(picker, ModelPicker)
        await settle(pilot)
        assert "openai/gpt-4o-mini" in picker.models
        assert "demo" in picker.models
        assert not any(m.startswith("anthropic/") for m in picker.models), "no ANTHROPIC_API_KEY"
        await type_text(pilot, "gpt-4o-mini")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(pilot.app.screen, ChatScreen)
        assert app_of(pilot).conversation.model.startswith("openai/gpt-4o-mini")


async def test_model_picker_accepts_a_name_it_does_not_know() -> None:
    async with running([]) as pilot:
        await pilot.press("ctrl+l")
        await settle(pilot)
        await type_text(pilot, "ollama/qwen3:8b")
        await pilot.press("enter")
        await pilot.pause()
        assert app_of(pilot).conversation.model == "ollama/qwen3:8b"


async def test_model_picker_escape_changes_nothing() -> None:
    async with running([]) as pilot:
        await pilot.press("ctrl+l")
        await settle(pilot)
        await pilot.press("down", "escape")
        assert isinstance(pilot.app.screen, ChatScreen)
        assert app_of(pilot).conversation.model == "demo"


async def test_model_picker_lists_configured_endpoints() -> None:
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(
        '[[endpoints]]\nname = "local"\nbase_url = "http://127.0.0.1:9/v1"\nmodels = ["llama3.1-8b"]\n'
    )
    async with running([]) as pilot:
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert pilot.app.screen.models == ["demo", "local/llama3.1-8b"]


async def test_every_notification_is_plain_text_without_control_sequences() -> None:
    async with running() as pilot:
        pilot.app.screen.query_one("#footer").notify(
            "[bold]model[/bold] said \x1b]52;c;Zm9v\x07hi", title="\x1b[31mred"
        )
        await pilot.pause()
        [note] = list(pilot.app._notifications)
        assert note.message == "[bold]model[/bold] said hi" and note.title == "red"
        assert note.markup is False


async def test_an_unknown_local_model_gets_a_guessed_window_shown_as_one(fake_provider) -> None:
    """From issue #14: a local server's model showed ``ctx 21/128k``; nothing
    says its window, so a conservative 8,192 is assumed and marked."""
    argv = ["--model", "openai/smollm2-local", "--api-base", f"{fake_provider.base_url}/v1"]
    fake_provider.script(Reply(text="one", usage={"input_tokens": 2000, "output_tokens": 100}))
    async with running(argv) as pilot:
        await send(pilot, "first")
        for _ in range(200):  # the footer follows the saved reply
            if footer(pilot).tokens:
                break
            await pilot.pause(0.05)
        assert footer(pilot).window == 8_192 and footer(pilot).window_guessed
        assert "ctx 2.1k/8.2k? (26%)" in screen_text(pilot)


async def test_model_picker_lists_the_local_servers_own_models(monkeypatch) -> None:
    """Issue #33: ctrl+l showed 88 entries of litellm's table and none of the
    models the local server lists at /v1/models."""
    from fake_local_server import LocalServer
    from fake_provider import FakeProvider

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    with FakeProvider(local=LocalServer("llama-cpp-python", 4_096, model="qwen-local")) as server:
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await pilot.press("ctrl+l")
            picker = pilot.app.screen
            assert isinstance(picker, ModelPicker)
            await wait_for(lambda: "openai/qwen-local" in picker.models, pilot)
            await settle(pilot)
            assert picker.models.index("openai/qwen-local") < picker.models.index(
                "openai/gpt-4o-mini"
            ), "the server's own models come before the table's"
            assert "/v1/models" in server.local.asked
            assert all("authorization" not in h for _, h in server.info_requests)
            await type_text(pilot, "qwen")
            await pilot.press("enter")
            await pilot.pause()
            assert app_of(pilot).conversation.model == "openai/qwen-local"
