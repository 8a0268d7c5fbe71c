"""The compare screen in the app, through the fake provider and a real SQLite
file: /compare fans out and streams into columns, the diff toggle, keeping
the best, labels, opening from a message and from two marks in the tree."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest
from fake_provider import Fail, Reply
from rich.text import Text
from textual import events

from core.sessions.session import Session
from tests.tui.helpers import app_of, notifications, running, screen_text, send, settle, type_text
from tui.chat.chat_screen import ChatScreen
from tui.screens.compare import CompareColumn, CompareScreen
from tui.screens.dialogs import TextPrompt
from tui.screens.tree import TreeScreen

FAKE_KEY = "sk-test-0123456789abcdefghij"


@pytest.fixture
def fake_args(fake_provider, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    # the fake answers several requests at once, as a hosted provider does
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(
        'branch_summary = "never"\n'
        f'[[endpoints]]\nname = "fake"\nbase_url = "{fake_provider.base_url}/v1"\nparallel = 4\n'
    )
    return ["--model", "openai/test", "--api-base", f"{fake_provider.base_url}/v1"]


def session(pilot) -> Session:
    return app_of(pilot).conversation.session


def columns(pilot) -> list[CompareColumn]:
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    return screen.columns


def header(column: CompareColumn) -> str:
    """Both header lines: the model (and label), then tokens · cost · seconds."""
    return " | ".join(
        str(column.query_one(c).render()) for c in (".compare-header", ".compare-figures")
    )


def highlighted(column: CompareColumn) -> list[str]:
    """The highlighted words of a column (the diff's changed spans)."""
    shown = column.shown
    return [shown.plain[s.start : s.end] for s in shown.spans if "reverse" in str(s.style)]


async def compare_two(pilot, fake, question="Capital of France?") -> None:
    fake.script_for("alpha", Reply(text="Paris is the capital of France."))
    fake.script_for("beta", Reply(text="The capital of France is Paris, of course."))
    await send(pilot, "/compare openai/alpha openai/beta")
    await send(pilot, question)


async def test_compare_fans_out_into_columns_and_keeps_the_chosen_one(
    fake_provider, fake_args
) -> None:
    async with running(fake_args, size=(120, 40)) as pilot:
        await compare_two(pilot, fake_provider)
        left, right = columns(pilot)
        assert left.text == "Paris is the capital of France."
        assert right.text == "The capital of France is Paris, of course."
        assert re.fullmatch(r"openai/alpha \| \d+ tok · \$[\d.]+ · \d+\.\ds", header(left))
        assert header(right).startswith("openai/beta | ")
        # the position is on the first model's reply until one is kept
        assert session(pilot).path[-1].message.text == left.text
        # the footer's session totals count every column
        stored = await session(pilot).store.session_usage(session(pilot).id)
        assert app_of(pilot).conversation.session_totals.usage == stored
        await pilot.press("tab", "enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        path = session(pilot).path
        assert path[-1].message.text == right.text
        assert path[-1].message.model == "openai/beta"
        assert re.search(r"◀ [12]/2 ▶", screen_text(pilot))  # in the order they finished
        bodies = [r.body for r in fake_provider.requests]
        assert sorted(b["model"] for b in bodies) == ["alpha", "beta"]


async def test_the_diff_toggle_highlights_the_words_that_differ(fake_provider, fake_args) -> None:
    async with running(fake_args, size=(120, 40)) as pilot:
        await compare_two(pilot, fake_provider)
        left, right = columns(pilot)
        assert highlighted(left) == highlighted(right) == []
        await pilot.press("d")
        await settle(pilot)
        assert highlighted(left) == ["Paris is the"]
        assert highlighted(right) == ["The", "is Paris, of course"]
        await pilot.press("d")
        await settle(pilot)
        assert highlighted(left) == []


async def test_a_failing_model_shows_its_error_in_its_column(fake_provider, fake_args) -> None:
    async with running(fake_args + ["--config", "/nonexistent"] * 0) as pilot:
        fake_provider.script_for("alpha", Fail(400, message="model alpha does not exist"))
        fake_provider.script_for("beta", Reply(text="Fine here."))
        await send(pilot, "/compare openai/alpha openai/beta")
        await send(pilot, "hello")
        left, right = columns(pilot)
        assert "model alpha does not exist" in screen_text(pilot)
        assert right.text == "Fine here." and right.error is None
        assert left.error


async def test_v_opens_the_alternatives_of_a_message_and_l_labels_one(
    fake_provider, fake_args
) -> None:
    async with running(fake_args, size=(120, 40)) as pilot:
        await compare_two(pilot, fake_provider)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        await pilot.press("ctrl+up")  # focus the last message: the reply
        await pilot.press("alt+v")
        await settle(pilot)
        shown = columns(pilot)
        assert sorted(c.text for c in shown) == [
            "Paris is the capital of France.",
            "The capital of France is Paris, of course.",
        ]  # in the order they were saved, as ◀ ▶ has them
        current = next(c for c in shown if c.body.has_focus)
        assert current.entry_id == session(pilot).leaf_id  # the current one is focused
        other = next(c for c in shown if c is not current)
        await pilot.press("tab", "l")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TextPrompt)
        await type_text(pilot, "best")
        await pilot.press("enter")
        await settle(pilot)
        assert "[best]" in header(other)
        assert await session(pilot).labels() == {other.entry_id: "best"}
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)


async def test_two_marked_entries_in_the_tree_compare_their_branches(
    fake_provider, fake_args
) -> None:
    async with running(fake_args, size=(120, 40)) as pilot:
        fake_provider.script(Reply(text="first answer"))
        await send(pilot, "first question")
        question = next(e for e in session(pilot).path if e.message and e.message.role == "user")
        await pilot.app.screen.chat_view.focus_entry(question.id)
        await pilot.press("enter")  # a second branch: the question edited
        await settle(pilot)
        pilot.app.screen.prompt.set_draft("other question")
        fake_provider.script(Reply(text="second answer"))
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("ctrl+g")
        await settle(pilot)
        tree = pilot.app.screen
        assert isinstance(tree, TreeScreen)
        rows = tree.tree_view.rows
        first = next(i for i, r in enumerate(rows) if r.preview == "first answer")
        second = next(i for i, r in enumerate(rows) if r.preview == "second answer")
        tree.tree_view.go(first)
        await pilot.press("ctrl+k")
        tree.tree_view.go(second)
        await pilot.press("ctrl+k")
        await settle(pilot)
        left, right = columns(pilot)
        assert "first question" in left.text and "first answer" in left.text
        assert "other question" in right.text and "second answer" in right.text
        await pilot.press("enter")  # keep the first branch
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        assert session(pilot).path[-1].message.text == "first answer"


async def test_compare_usage_and_off(fake_provider, fake_args) -> None:
    async with running(fake_args) as pilot:
        await send(pilot, "/compare openai/alpha")
        assert any("Usage: /compare" in n for n in notifications(pilot))
        assert pilot.app.screen.prompt.text == "/compare openai/alpha"  # the draft came back
        pilot.app.screen.prompt.set_draft("")
        await send(pilot, "/compare openai/alpha openai/beta")
        assert "the next message goes to openai/alpha, openai/beta" in screen_text(pilot)
        await send(pilot, "/compare off")
        assert "the next message goes to" not in screen_text(pilot)
        fake_provider.script(Reply(text="just one"))
        await send(pilot, "hello")
        assert isinstance(pilot.app.screen, ChatScreen)
        assert session(pilot).path[-1].message.text == "just one"


async def test_escape_stops_every_column_and_keeps_what_streamed(fake_provider, fake_args) -> None:
    long = " ".join(f"word{i}" for i in range(1500))
    for model in ("alpha", "beta"):
        fake_provider.script_for(model, Reply(text=long, chunk_size=6, delay=0.02))
    async with running(fake_args, size=(120, 40)) as pilot:
        await send(pilot, "/compare openai/alpha openai/beta")
        await type_text(pilot, "go")
        await pilot.press("enter")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30

        def following(column: CompareColumn) -> bool:
            """Taller than its column and scrolled to its newest line."""
            body = column.body
            return 0 < body.max_scroll_y == body.scroll_y

        while not (
            isinstance(pilot.app.screen, CompareScreen)
            and all(following(c) for c in pilot.app.screen.columns)
        ):
            assert loop.time() < deadline, "the columns did not fill and follow the stream"
            await pilot.pause(0.05)
        await pilot.press("escape")  # stops both streams; the screen stays
        await settle(pilot)
        left, right = columns(pilot)
        assert not pilot.app.screen.streaming
        for column in (left, right):
            assert 60 < len(column.text) < len(long) and long.startswith(column.text)
            assert header(column).endswith(" · stopped")
        replies = [
            e.message for e in (await session(pilot).store.entries(session(pilot).id))
            if e.message is not None and e.message.role == "assistant"
        ]  # fmt: skip
        assert sorted(m.model for m in replies) == ["openai/alpha", "openai/beta"]
        assert {m.stop_reason for m in replies} == {"aborted"}
        await pilot.press("escape")  # now it closes
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)


async def test_enter_keeps_the_column_tabbed_to_even_typed_at_once(
    fake_provider, fake_args
) -> None:
    """Tab then Enter arriving together (a fast typist, tmux send-keys): Enter keeps
    the column Tab moved to, though the focus itself moves a moment later."""
    async with running(fake_args, size=(120, 40)) as pilot:
        await compare_two(pilot, fake_provider)
        app = pilot.app
        app.post_message(events.Key("tab", None))
        app.post_message(events.Key("enter", "\r"))
        await settle(pilot)
        assert isinstance(app.screen, ChatScreen)
        assert session(pilot).path[-1].message.model == "openai/beta"


async def test_narrow_columns_show_every_figure() -> None:
    """Three columns at 60 columns: the figures wrap, the seconds are not cut off."""
    from textual.app import App

    from core.branching.comparison import of_alternatives
    from tests.compare.builders import fanned_out

    app = App()
    async with app.run_test(size=(60, 20)) as pilot:
        await app.push_screen(CompareScreen(of_alternatives(fanned_out(), "e000004", "e000004")))
        await settle(pilot)
        text = screen_text(pilot)
        assert "1.5s" in text and "2.0s" in text
        assert "anthropic/b" in text


async def test_long_texts_are_laid_out_whole_after_the_first_frame() -> None:
    """Only the first pieces are laid out before the first frame; then all of them."""
    from textual.app import App

    from core.branching.comparison import of_alternatives
    from core.branching.tree import SessionTree
    from tests.branching.builders import entry
    from tests.compare.builders import reply
    from tui.screens.compare import FIRST_PIECES, pieces

    long = [
        "\n".join(f"line {i} of answer {n}, " + "word " * 12 for i in range(400)) for n in (1, 2)
    ]
    tree = SessionTree.from_entries(
        [
            entry(0, None, "Write a long answer.", "user"),
            reply(1, "e000000", long[0], "openai/a"),
            reply(2, "e000000", long[1], "openai/b"),
        ],
        leaf_id="e000001",
    )
    app = App()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = CompareScreen(of_alternatives(tree, "e000001", "e000001"))
        await app.push_screen(screen)
        await settle(pilot)
        for column, text in zip(screen.columns, long, strict=True):
            shown = [str(p.render()) for p in column.body.query(".compare-piece")]
            assert len(shown) == len(pieces(Text(text))) > FIRST_PIECES
            assert "\n".join(shown) == text
        await pilot.press("end")
        assert "line 399 of answer 1" in screen_text(pilot)
