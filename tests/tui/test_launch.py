"""Opening the app: which session, which model, what is shown first."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from fake_provider import Reply, Stall
from textual import events
from textual.pilot import Pilot

from core.providers.cost import price_table
from core.sessions.content import TextContent
from core.sessions.entries import ModelChange
from core.sessions.messages import Message, user_text
from core.sessions.session import Session
from core.tokens import DEMO_CONTEXT_WINDOW
from tests.tui.helpers import (
    SIZE,
    app_of,
    notifications,
    running,
    screen_text,
    send,
    settle,
    type_text,
    wait_for,
)
from tui.chat import chat_screen as chat_screen
from tui.cli import build_parser, main
from tui.modes.bootstrap import open_store
from tui.modes.launch import build_app, prepare_launch, resume_command
from tui.widgets.footer import StatusFooter
from tui.widgets.prompt_input import PromptInput
from tui.widgets.user_message import UserMessage


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
        hostile = await resume_command(first, store, "/tmp/\x1b]0;pwned\x07db\u202e")
        assert hostile is not None and "\x1b" not in hostile and "\x07" not in hostile
        assert "\u202e" not in hostile and "db" in hostile


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


@pytest.mark.patched
def test_the_app_runs_with_quick_handovers_between_threads(monkeypatch) -> None:
    """A key read and a frame written (two threads) wait for the app's thread to
    let go of the interpreter: it does within a millisecond while the app runs."""
    import sys

    import tui.modes.launch

    during: list[float] = []

    async def app_run(*_args) -> int:
        during.append(sys.getswitchinterval())
        return 0

    before = sys.getswitchinterval()
    monkeypatch.setattr(tui.modes.launch, "_run", app_run)
    assert main(["--model", "demo"]) == 0
    assert during == [tui.modes.launch.SWITCH_SECONDS] and tui.modes.launch.SWITCH_SECONDS < before
    assert sys.getswitchinterval() == before


@pytest.mark.parametrize(
    ("model", "started"), [("openai/local", ["httpx"]), ("anthropic/claude-x", [])]
)
def test_httpx_loads_from_process_start_and_no_other_sdk_does(
    model: str, started: list[str], monkeypatch
) -> None:
    """The OpenAI-compatible wire's client is imported in a thread from the
    launch on, before the app draws anything; an SDK that takes longer waits
    for the first frame."""
    from textual.app import App

    from core.providers import sdk

    when_run: list[list[str]] = []

    async def run_async(self, *args, **kwargs) -> None:
        when_run.append(sorted(sdk._imports))

    monkeypatch.setattr(App, "run_async", run_async)
    monkeypatch.setattr(sdk, "_imports", {})
    assert main(["--model", model, "--api-base", "http://127.0.0.1:9/v1"]) == 0
    assert when_run == [started]


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
    screen, the word diff), the model picker, the help screen, images
    (Pillow, textual-image) and sync (with no sync folder) are imported when
    first used, not on the way to the first frame or with the chat view."""
    code = """
import asyncio, sys
from tests.tui.helpers import running, settle

async def main():
    async with running([]) as pilot:
        await settle(pilot)
        unused = ("core.branching.comparison", "core.chat.fanout", "core.branching.word_diff", "tui.screens.compare",
                  "tui.screens.model_picker", "tui.chat.help_screen", "PIL", "textual_image",
                  "core.sync.engine", "cryptography")
        print("LOADED", sorted(m for m in unused if m in sys.modules))

asyncio.run(main())
"""
    assert "LOADED []" in loaded_by(code)


@pytest.mark.patched
async def test_what_the_app_loaded_is_left_out_of_later_collections(fake_args) -> None:
    """Once the chat view's modules are in, everything alive is frozen (``gc.freeze``):
    full collections during the session walk only what it made since."""
    import gc

    from tui.internals import gc_policy as _gc

    gc.unfreeze()
    _gc._frozen = False
    threshold = gc.get_threshold()
    async with running([]) as pilot:
        await settle(pilot)
        assert gc.get_freeze_count() > 10_000
        # Young collections come less often than Python's default (700 allocations).
        assert gc.get_threshold() == (_gc.YOUNG_COLLECTION_EVERY, *threshold[1:])
    gc.set_threshold(*threshold)
    # Another chat screen (another session) freezes nothing more: only the first does.
    # (Frozen objects may still be freed meanwhile: the app's worker threads end.)
    garbage = [[] for _ in range(1_000)]
    frozen = gc.get_freeze_count()
    _gc.freeze_loaded()
    assert gc.get_freeze_count() <= frozen
    del garbage
    gc.unfreeze()


@pytest.mark.patched
def test_a_short_reply_makes_no_young_collection_of_its_own(monkeypatch) -> None:
    """While a reply streams, the young generations are collected after a render
    once as many objects were made as make an automatic collection: not after
    every render (a short reply's one render collected for 1.8 ms)."""
    import gc

    from tui.internals import gc_policy as _gc

    collect = gc.collect
    made: list[int] = []
    _gc.defer_full_collections()
    try:
        collect()  # the count of new objects starts from nothing
        monkeypatch.setattr(gc, "collect", lambda generation=2: made.append(generation) or 0)
        _gc.collect_young()
        assert made == []
        garbage = [[] for _ in range(gc.get_threshold()[0])]
        _gc.collect_young()
        assert made == [1]
        del garbage
    finally:
        monkeypatch.undo()
        _gc.restore_collections()


@pytest.mark.patched
def test_collection_is_paused_from_the_start_until_the_chat_views_modules_are_in(
    monkeypatch,
) -> None:
    """A full collection while the program starts walks every module and class
    loaded so far for nothing (25-40 ms, before the first frame or during the
    first reply): none runs until the chat view's modules are in."""
    import gc

    from tui.internals import gc_policy as _gc

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
from tui.modes.launch import prepare_launch

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


@asynccontextmanager
async def chat_view_held_back(
    monkeypatch: pytest.MonkeyPatch, argv: Sequence[str]
) -> AsyncIterator[tuple[Pilot, threading.Event]]:
    """The app just launched, its chat view's modules still loading: the import
    the load worker does (in a thread) waits until the event is set."""
    release = threading.Event()

    def import_when_released(name: str) -> ModuleType:
        assert release.wait(timeout=30), "never released"
        return importlib.import_module(name)

    monkeypatch.setattr(
        chat_screen, "importlib", SimpleNamespace(import_module=import_when_released)
    )
    args = build_parser().parse_args(list(argv))
    app, store = await build_app(args, prepare_launch(args))
    try:
        async with app.run_test(size=SIZE) as pilot:
            try:
                await pilot.pause()
                yield pilot, release
            finally:
                release.set()  # the thread must end for the app to
    finally:
        await store.close()


def lines_showing(pilot: Pilot, text: str) -> list[int]:
    """The screen lines that show ``text`` alone, below the title."""
    lines = screen_text(pilot).splitlines()
    return [i for i, line in enumerate(lines) if i > 0 and line.strip() == text]


async def test_a_message_sent_while_the_chat_view_loads_is_on_screen_in_the_next_frame(
    monkeypatch, fake_provider, fake_args
) -> None:
    """Enter just after launch: the message is in the next frame (literally, its
    control sequences removed) though the chat view is not there yet; the chat
    view shows it once, where and as it was shown (the reply is held back, so
    that nothing moves it)."""
    fake_provider.script(Stall(30, reply=Reply(text="never")))
    async with chat_view_held_back(monkeypatch, fake_args) as (pilot, release):
        screen = pilot.app.screen
        typed = "[bold]not bold[/bold] \x1b[2J\x1b]52;c;aGk=\x07done"
        screen.prompt.text = typed  # as no key or paste can: the input strips them
        await pilot.press("enter")
        await pilot.pause()
        shown = "[bold]not bold[/bold] done"
        assert not screen.query("#chat"), "the chat view was not held back"
        assert len(lines_showing(pilot, shown)) == 1
        assert not screen.query_one("#welcome").display
        stand_in = screen.query_one("#stand-in")
        assert stand_in.display
        place, background = stand_in.region, stand_in.styles.background
        before = screen_text(pilot).splitlines()[place.y : place.bottom]
        release.set()
        await wait_for(lambda: not screen.stand_in.display, pilot)
        await pilot.pause()
        rows = [w for w in screen.chat_view.message_widgets if isinstance(w, UserMessage)]
        assert [row.text for row in rows] == [shown]
        assert len(lines_showing(pilot, shown)) == 1, "shown twice"
        assert (rows[0].region, rows[0].styles.background) == (place, background)
        assert screen_text(pilot).splitlines()[place.y : place.bottom] == before
        await pilot.press("escape")
        await settle(pilot)
    assert messages(pilot.app)[0] == ("user", typed)  # saved as sent


async def test_enter_paints_the_emptied_input_with_the_message_in_one_frame(
    monkeypatch, fake_provider, fake_args
) -> None:
    """The first frame painted after Enter shows the message: the input's
    emptying is not painted at once (as a key's echo is) in a frame of its own,
    without the message, but with the message; and that frame is painted by
    Enter's handling itself, not at the update timer's next tick."""
    fake_provider.script(Stall(30, reply=Reply(text="never")))
    async with chat_view_held_back(monkeypatch, fake_args) as (pilot, release):
        app, screen = pilot.app, pilot.app.screen
        await type_text(pilot, "one frame")
        await pilot.pause()
        frames: list[str] = []
        display = app._display

        def recorded(shown_screen, update):  # type: ignore[no-untyped-def]
            display(shown_screen, update)
            frames.append(screen_text(pilot))

        app._display = recorded  # type: ignore[method-assign]
        start_send = screen._start_send
        painted_by_send: list[int] = []

        def recorded_send(*args):  # type: ignore[no-untyped-def]
            start_send(*args)
            painted_by_send.append(len(frames))

        monkeypatch.setattr(screen, "_start_send", recorded_send)
        await pilot.press("enter")
        await wait_for(lambda: frames and not screen.prompt.text, pilot)
        first = frames[0].splitlines()
        assert [line.strip() for line in first[1:]].count("one frame") == 1, frames[0]
        assert painted_by_send[0] >= 1  # not 0: not left to the timer
        release.set()
        await pilot.press("escape")
        await settle(pilot)


async def test_the_session_totals_are_read_while_the_chat_view_loads(
    monkeypatch, fake_provider, fake_args
) -> None:
    """A first message waits for the session's totals as well as for the chat
    view: they are read with the view's import, not after it (here, while that
    import is held back)."""
    async with chat_view_held_back(monkeypatch, fake_args) as (pilot, release):
        screen = pilot.app.screen
        conversation = app_of(pilot).conversation
        await wait_for(lambda: conversation.totals().session_tokens is not None, pilot)
        assert not screen.loaded and not screen.query("#chat")
        release.set()
        await settle(pilot)


async def test_esc_while_the_chat_view_loads_brings_the_message_back(
    monkeypatch, fake_provider, fake_args
) -> None:
    async with chat_view_held_back(monkeypatch, fake_args) as (pilot, release):
        screen = pilot.app.screen
        await type_text(pilot, "wait for me")
        await pilot.press("enter")
        await pilot.pause()
        assert lines_showing(pilot, "wait for me")
        await pilot.press("escape")
        await pilot.pause()
        assert screen.prompt.text == "wait for me"
        assert not screen.stand_in.display
        assert screen.query_one("#welcome").display
        release.set()
        await settle(pilot)
        assert screen.prompt.text == "wait for me"
        assert app_of(pilot).conversation.session.path == []
    assert fake_provider.requests == []


async def test_a_save_failure_while_the_chat_view_loads_keeps_the_draft(
    monkeypatch, fake_args
) -> None:
    async with chat_view_held_back(monkeypatch, fake_args) as (pilot, release):
        screen = pilot.app.screen
        await app_of(pilot).conversation.session.store.close()
        await type_text(pilot, "precious words")
        await pilot.press("enter")
        await pilot.pause()
        assert lines_showing(pilot, "precious words")
        release.set()
        await settle(pilot)
        assert screen.prompt.text == "precious words"
        assert not screen.stand_in.display
        assert not lines_showing(pilot, "precious words")[:-1], "only the input shows it"
        assert any("Could not save the message, draft kept" in n for n in notifications(pilot))


async def test_what_is_typed_while_the_chat_view_loads_is_all_sent(
    monkeypatch, fake_provider, fake_args
) -> None:
    """A slash command and a second message while the first waits for the chat
    view: the command runs (the stand-in and the hidden welcome stay), the
    second is queued, and both are sent in order."""
    fake_provider.script(Reply(text="One."), Reply(text="Two."))
    async with chat_view_held_back(monkeypatch, fake_args) as (pilot, release):
        screen = pilot.app.screen
        await type_text(pilot, "first")
        await pilot.press("enter")
        await type_text(pilot, "/model openai/other")
        await pilot.press("enter")
        await type_text(pilot, "second")
        await pilot.press("enter")
        await pilot.pause()
        assert lines_showing(pilot, "first")
        assert not screen.query_one("#welcome").display
        assert screen.compaction_status.queued == ("second",)
        release.set()
        await settle(pilot)
        assert [m for m in messages(pilot.app) if m[0] == "user"] == [
            ("user", "first"),
            ("user", "second"),
        ]
        assert not screen.stand_in.display
        assert screen.prompt.text == ""
    assert [r.body["model"] for r in fake_provider.requests] == ["other", "other"]


def test_a_message_sent_while_the_chat_view_loads_needs_none_of_its_modules() -> None:
    """Run in a fresh interpreter, the chat view's import held back: the message
    is on screen with no Markdown and no message widget loaded."""
    code = """
import asyncio, importlib, sys, threading
from types import SimpleNamespace
from tests.tui.helpers import running
from tui.cli import build_parser
from tui.modes.launch import build_app, prepare_launch
from tui.chat import chat_screen as chat

release = threading.Event()
chat.importlib = SimpleNamespace(import_module=lambda name: (release.wait(30), importlib.import_module(name))[1])

async def main():
    args = build_parser().parse_args([])
    app, store = await build_app(args, prepare_launch(args))
    async with app.run_test() as pilot:
        await pilot.pause()
        for key in "hi":
            await pilot.press(key)
        await pilot.press("enter")
        await pilot.pause()
        print("SHOWN", app.screen.stand_in.display)
        print("LOADED", sorted(m for m in sys.modules if m.startswith(("tui.widgets.chat_view", "tui.widgets.user_message", "textual.widgets._markdown"))))
        release.set()
    await store.close()

asyncio.run(main())
"""
    printed = loaded_by(code)
    assert "SHOWN True" in printed and "LOADED []" in printed, printed


async def test_a_window_nothing_needs_looking_up_is_in_the_first_footer(monkeypatch) -> None:
    """The demo's window (and a configured one) needs no table: the footer has it
    while the chat view still loads, not a frame of ``ctx 0/?`` first."""
    async with chat_view_held_back(monkeypatch, ["--model", "demo"]) as (pilot, release):
        assert not pilot.app.screen.query("#chat"), "the chat view was not held back"
        footer = pilot.app.screen.query_one("#footer", StatusFooter)
        assert footer.state.window == DEMO_CONTEXT_WINDOW
        assert not footer.state.window_guessed
        release.set()
        await settle(pilot)


@pytest.mark.parametrize(
    ("model", "entry", "shown"),
    [
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "0/200k"),
        ("openai/gpt-4o", "gpt-4o", "0/128k"),
    ],
)
async def test_a_window_the_bundled_table_knows_is_in_the_first_footer(
    monkeypatch, model: str, entry: str, shown: str
) -> None:
    """A model in litellm's bundled table: the footer has its window while the
    chat view still loads, as the whole table says it, not ``ctx 0/?`` first."""
    window = price_table()[entry]["max_input_tokens"]
    async with chat_view_held_back(monkeypatch, ["--model", model]) as (pilot, release):
        assert not pilot.app.screen.query("#chat"), "the chat view was not held back"
        footer = pilot.app.screen.query_one("#footer", StatusFooter)
        assert (footer.state.window, footer.state.window_guessed) == (window, False)
        assert f"ctx {shown}" in screen_text(pilot)
        release.set()
        await settle(pilot)
