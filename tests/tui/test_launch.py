"""Opening the app: which session, which model, what is shown first."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual import events

from core.content import TextContent
from core.entries import ModelChange
from core.messages import Message, user_text
from core.session import Session
from tests.tui.helpers import app_of, running, screen_text, send, settle
from tui.bootstrap import open_store
from tui.cli import build_parser, main
from tui.launch import build_app, prepare_launch, resume_command
from tui.widgets.prompt_input import PromptInput


def messages(app) -> list[tuple[str, str]]:
    return [
        (e.message.role, e.message.text)
        for e in app.conversation.session.path
        if e.message is not None
    ]


async def test_new_session_is_empty_and_input_focused() -> None:
    async with running([]) as pilot:
        app = app_of(pilot)
        assert isinstance(app.focused, PromptInput)
        assert app.conversation.session.path == []
        assert not app.conversation.session.persisted, "an untouched session leaves nothing behind"
        text = screen_text(pilot)
        assert "demo (offline)" in text


async def test_continue_opens_the_latest_session_top_to_bottom() -> None:
    async with running([]) as pilot:
        await send(pilot, "first question")
        session_id = app_of(pilot).conversation.session.id
    async with running(["-c"]) as pilot:
        app = app_of(pilot)
        assert app.conversation.session.id == session_id
        assert [role for role, _ in messages(app)] == ["user", "assistant"]
        assert "first question" in screen_text(pilot)
        assert isinstance(app.focused, PromptInput)


async def test_session_flag_opens_that_session() -> None:
    async with running([]) as pilot:
        await send(pilot, "in the first session")
        first = app_of(pilot).conversation.session.id
    async with running([]) as pilot:
        await send(pilot, "in the second session")
    async with running(["--session", first]) as pilot:
        assert app_of(pilot).conversation.session.id == first
        assert messages(app_of(pilot))[0] == ("user", "in the first session")


async def test_quitting_names_the_command_that_resumes_the_session() -> None:
    async with running([]) as pilot:
        untouched = app_of(pilot).conversation.session
        assert await resume_command(untouched, untouched.store, None) is None  # nothing saved
        await send(pilot, "in the first session")
        first = app_of(pilot).conversation.session
        assert await resume_command(first, first.store, None) == "tangents -c"
    async with running([]) as pilot:
        await send(pilot, "in the second session")
        store = app_of(pilot).conversation.session.store
        assert await resume_command(first, store, None) == f"tangents --session {first.id}"
        assert await resume_command(first, store, "/tmp/my db") == (
            f"tangents --db '/tmp/my db' --session {first.id}"
        )


async def test_model_thinking_and_system_flags_apply_to_the_first_message() -> None:
    async with running(["--model", "demo", "--thinking", "high", "--system", "Be brief."]) as pilot:
        await send(pilot, "hi")
        path = app_of(pilot).conversation.session.path
        assert path[0].message is not None and path[0].message.role == "system"
        assert path[0].message.text == "Be brief."
        changes = [e.payload for e in path if isinstance(e.payload, ModelChange)]
        assert changes == [ModelChange("demo", "high")]
        assert "thinking high" in screen_text(pilot)


async def test_continue_keeps_the_sessions_model_unless_told_otherwise(monkeypatch) -> None:
    async with running(["--model", "demo", "--thinking", "low"]) as pilot:
        await send(pilot, "hi")
    monkeypatch.setenv(
        "OPENAI_API_KEY", "sk-test-0123456789abcdefghij"
    )  # default model would change
    async with running(["-c"]) as pilot:
        conversation = app_of(pilot).conversation
        assert (conversation.model, conversation.thinking) == ("demo", "low")


async def test_without_any_key_the_welcome_explains_how_to_set_one() -> None:
    async with running([]) as pilot:
        text = screen_text(pilot)
        assert "No API key is set" in text
        assert "ANTHROPIC_API_KEY" in text and "OPENAI_API_KEY" in text and "--api-base" in text
        assert app_of(pilot).conversation.model == "demo"


async def test_with_a_key_the_welcome_is_short(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    async with running([]) as pilot:
        text = screen_text(pilot)
        assert "No API key" not in text
        assert "anthropic/claude" in text


async def test_welcome_goes_away_after_the_first_message() -> None:
    async with running([]) as pilot:
        await send(pilot, "hello")
        assert not pilot.app.screen.query_one("#welcome").display


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--session", "nope"], "no session with id 'nope'"),
        (["--config", "/nonexistent/config.toml"], "config file not found"),
    ],
)
def test_start_up_errors_are_one_line_and_exit_2(argv, expected, capsys) -> None:
    import gc

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert err.count("\n") == 1
    assert gc.isenabled()  # collection, paused while the program starts, is back


def test_a_bad_database_is_refused_before_the_app_starts(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 100)
    assert main(["--db", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and err.count("\n") == 1
    assert bad.read_bytes() == b"this is not a database" * 100


def loaded_by(code: str) -> str:
    """What a probe printed, run in a fresh interpreter from the checkout."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_nothing_on_the_way_to_the_first_frame_imports_a_provider_sdk(tmp_path) -> None:
    """Run in a fresh interpreter: the app draws its first frame, then we look."""
    code = """
import asyncio, sys
from tests.tui.helpers import running

async def main():
    async with running([]) as pilot:
        await pilot.pause()
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "anthropic", "openai"))
        print("LOADED", loaded)

asyncio.run(main())
"""
    assert "LOADED []" in loaded_by(code)


def test_the_app_imports_no_screen_or_machinery_it_has_not_shown_yet() -> None:
    """Launched, its chat view loaded: comparisons (the fan-out, the compare
    screen, the word diff), the model picker and the help screen are imported
    when first used, not on the way to the first frame."""
    code = """
import asyncio, sys
from tests.tui.helpers import running, settle

async def main():
    async with running([]) as pilot:
        await settle(pilot)
        unused = ("core.comparison", "core.fanout", "core.word_diff", "tui.screens.compare",
                  "tui.screens.model_picker", "tui.screens.help")
        print("LOADED", sorted(m for m in unused if m in sys.modules))

asyncio.run(main())
"""
    assert "LOADED []" in loaded_by(code)


async def test_what_the_app_loaded_is_left_out_of_later_collections(fake_args) -> None:
    """Once the chat view's modules are in, everything alive is frozen (``gc.freeze``):
    full collections during the session walk only what it made since."""
    import gc

    from tui.widgets import _gc

    gc.unfreeze()
    _gc._frozen = False
    async with running([]) as pilot:
        await settle(pilot)
        assert gc.get_freeze_count() > 10_000
    # Another chat screen (another session) freezes nothing more: only the first does.
    # (Frozen objects may still be freed meanwhile: the app's worker threads end.)
    garbage = [[] for _ in range(1_000)]
    frozen = gc.get_freeze_count()
    _gc.freeze_loaded()
    assert gc.get_freeze_count() <= frozen
    del garbage
    gc.unfreeze()


def test_collection_is_paused_from_the_start_until_the_chat_views_modules_are_in(
    monkeypatch,
) -> None:
    """A full collection while the program starts walks every module and class
    loaded so far for nothing (25-40 ms, before the first frame or during the
    first reply): none runs until the chat view's modules are in."""
    import gc

    from tui.widgets import _gc

    monkeypatch.setattr(_gc, "_frozen", True)  # this test process is not frozen
    assert gc.isenabled()
    try:
        _gc.pause_for_start_up()
        assert not gc.isenabled()
        _gc.freeze_loaded()
        assert gc.isenabled()
        # A collector someone else turned off stays off.
        gc.disable()
        _gc.pause_for_start_up()
        _gc.freeze_loaded()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_launch_checks_import_none_of_the_chat_views_widgets() -> None:
    """Without a [keymap], checking it imports no widget module (the chat view and
    Markdown load after the first frame); a [keymap] is checked against them."""
    code = """
import sys
from tui.cli import build_parser
from tui.launch import prepare_launch

prepare_launch(build_parser().parse_args([]))
print("LOADED", sorted(m for m in sys.modules if m.startswith(("tui.widgets.", "textual.widgets._markdown"))))
"""
    loaded = loaded_by(code).split("LOADED ", 1)[1]
    assert "tui.widgets.assistant_message" not in loaded and "_markdown" not in loaded, loaded


async def test_a_message_sent_while_a_long_session_loads_lands_after_it() -> None:
    """The path is shown after the first frame; what is sent meanwhile goes after it."""
    args = build_parser().parse_args(["-c"])
    launch = prepare_launch(args)
    store = await open_store(launch.db_path)
    session = await Session.create(store)
    await session.append_many(
        [
            user_text(f"q{i}") if i % 2 == 0 else Message("assistant", (TextContent(f"a{i}"),))
            for i in range(400)
        ]
    )
    await store.close()
    app, store = await build_app(args, launch)
    try:
        async with app.run_test(size=(100, 32)) as pilot:
            await pilot.pause()
            for key in ["l", "a", "t", "e", "enter"]:
                app.post_message(events.Key(key, "\r" if key == "enter" else key))
            await settle(pilot)
            path = app.conversation.session.path
            assert len(path) == 403  # 400, the model change, "late" and its reply
            assert messages(app)[-2] == ("user", "late")
            assert app.screen.chat_view.entries == path
    finally:
        await store.close()
