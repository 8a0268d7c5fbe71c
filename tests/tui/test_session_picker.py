"""The session picker on real SQLite files: listing, search as you type,
resuming on the saved leaf, rename, archive, delete; -r, /new and /export."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import Input

from core.formats.export import EXPORT_FORMATS
from core.sessions.persistence import SessionInfo, SessionMatch, SessionSummary
from tests.screenshots import steady_cursor
from tests.tui.helpers import (
    app_of,
    notifications,
    running,
    screen_text,
    send,
    settle,
    type_text,
    wait_for,
)
from tests.tui.sessions_seed import seed
from tui.chat.chat_screen import ChatScreen
from tui.cli import build_parser
from tui.modes.bootstrap import UsageError
from tui.modes.launch import build_app, prepare_launch
from tui.screens.dialogs import Confirm, TextPrompt
from tui.screens.sessions import SessionPicker
from tui.widgets.session_list import SessionList
from tui.widgets.session_rows import age, detail_line, title_line

OLD, MID, NEW = (
    "2025-01-01T10:00:00.000000Z",
    "2025-02-01T10:00:00.000000Z",
    "2025-03-01T10:00:00.000000Z",
)


async def three_sessions():
    return await seed(
        ("Oak planting", ["When do I plant an oak?", "In autumn."], OLD),
        (None, ["How do I bake rye bread?", "Use a sourdough starter and patience."], MID),
        (
            "Fixing the bike",
            ["My chain skips", "Replace the chain.", "And the cassette?", "Check it too."],
            NEW,
        ),
        branch=["Clean it first.", "ok", "Then oil it."],
    )


def picker_of(pilot) -> SessionPicker:
    screen = pilot.app.screen
    assert isinstance(screen, SessionPicker), screen
    return screen


async def searched(pilot) -> None:
    """Wait for the debounced search to run and its rows to show."""
    for _ in range(200):
        await settle(pilot)
        if picker_of(pilot).settled:
            return
        await pilot.pause(0.05)
    raise AssertionError("the search never answered")


def shown_ids(pilot) -> list[str]:
    return [row.summary.info.id for row in picker_of(pilot).query_one(SessionList).rows]


async def test_dash_r_opens_on_the_picker_newest_first_with_counts() -> None:
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "-r"], size=(110, 30)) as pilot:
        assert shown_ids(pilot) == [bike.id, rye.id, oak.id]
        text = screen_text(pilot)
        assert "Fixing the bike" in text and "My chain skips" in text
        assert "7 msgs · 2 branches (1 alt) · " in text, "counts come from the stored columns"
        assert "2 msgs · 1 branch · " in text, "a session without alternatives says nothing of them"
        assert "How do I bake rye bread?" in text, "an untitled session shows its first message"
        assert "anthropic/claude-sonnet-4-5" in text and "3 sessions, newest first" in text
        await pilot.press("escape")
        await settle(pilot)
        assert (
            isinstance(pilot.app.screen, ChatScreen)
            and not app_of(pilot).conversation.session.persisted
        )


async def test_search_as_you_type_filters_and_highlights() -> None:
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "-r"], size=(110, 30)) as pilot:
        await type_text(pilot, "sourd")
        await searched(pilot)
        assert shown_ids(pilot) == [rye.id]
        list_view = picker_of(pilot).query_one(SessionList)
        line = list_view._line(list_view.rows[0], 1, 100)
        highlighted = [line.plain[span.start : span.end] for span in line.spans if span.style]
        assert "sourdough" in highlighted, "the matching word is styled"
        await pilot.press(*["backspace"] * 5)
        await type_text(pilot, "chain")
        await searched(pilot)
        assert shown_ids(pilot) == [bike.id]
        await pilot.press(*["backspace"] * 5)
        await type_text(pilot, "planting")
        await searched(pilot)
        assert shown_ids(pilot) == [oak.id], "titles are searched too"
        assert "1 session matching “planting”" in screen_text(pilot)


async def test_a_stale_query_never_overwrites_a_newer_one() -> None:
    await three_sessions()
    async with running(["--model", "demo", "-r"]) as pilot:
        picker = picker_of(pilot)
        picker._load(picker._query_number - 1, "oak", False, None)  # an old query finishing late
        await settle(pilot)
        assert len(shown_ids(pilot)) == 3


async def test_enter_resumes_the_chosen_session_on_its_saved_leaf() -> None:
    _, _, bike = await three_sessions()
    async with running(["--model", "demo"]) as pilot:
        await pilot.press("ctrl+o")
        await settle(pilot)
        await type_text(pilot, "chain")
        await pilot.press("enter")  # before the search has answered: it waits for it
        await settle(pilot)
        chat = pilot.app.screen
        assert isinstance(chat, ChatScreen) and chat.session.id == bike.id
        assert chat.session.leaf_id == bike.leaf_id
        assert [e.message.text for e in chat.session.path] == [
            "My chain skips",
            "Replace the chain.",
            "And the cassette?",
            "Check it too.",
        ]
        # the chat view is filled just after the chat screen's first frame
        await wait_for(lambda: "Check it too." in screen_text(pilot), pilot, timeout=30)
        assert "Then oil it." not in screen_text(pilot)


async def test_rename_from_the_picker() -> None:
    _, rye, _ = await three_sessions()
    async with running(["--model", "demo", "-r"]) as pilot:
        await pilot.press("down")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TextPrompt)
        await pilot.press("ctrl+u")
        await type_text(pilot, "Rye bread")
        await pilot.press("enter")
        await settle(pilot)
        picker = picker_of(pilot)
        assert picker.query_one(SessionList).highlighted.summary.info.title == "Rye bread"
        assert (
            await app_of(pilot).conversation.session.store.get_session(rye.id)
        ).title == "Rye bread"


async def test_archive_hides_and_the_toggle_shows_and_unarchives() -> None:
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "-r"]) as pilot:
        await pilot.press("ctrl+s")  # the newest: the bike
        await settle(pilot)
        assert shown_ids(pilot) == [rye.id, oak.id]
        assert "Archived: Fixing the bike" in notifications(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert shown_ids(pilot) == [bike.id, rye.id, oak.id]
        assert "archived" in screen_text(pilot)
        assert picker_of(pilot).query_one(SessionList).highlighted.summary.info.id == rye.id
        await pilot.press("up", "ctrl+s")  # unarchive the bike
        await settle(pilot)
        assert "Unarchived: Fixing the bike" in notifications(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert shown_ids(pilot) == [bike.id, rye.id, oak.id]


@pytest.mark.parametrize(("answer", "deleted"), [("n", False), ("y", True)])
async def test_delete_asks_first(answer: str, deleted: bool) -> None:
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "-r"]) as pilot:
        await pilot.press("down", "down", "ctrl+d")
        await settle(pilot)
        assert isinstance(pilot.app.screen, Confirm)
        assert "Delete “Oak planting” (2 messages, 1 branch) for good?" in screen_text(pilot)
        await pilot.press(answer)
        await settle(pilot)
        assert shown_ids(pilot) == ([bike.id, rye.id] if deleted else [bike.id, rye.id, oak.id])
        store = app_of(pilot).conversation.session.store
        assert (await store.get_session(oak.id) is None) is deleted


async def test_deleting_the_session_you_are_in_moves_to_a_new_one() -> None:
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "--session", bike.id]) as pilot:
        await pilot.press("ctrl+o")
        await settle(pilot)
        await pilot.press("ctrl+d")
        await settle(pilot)
        assert "the session you are in" in screen_text(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        session = app_of(pilot).conversation.session
        assert session.id not in (oak.id, rye.id, bike.id) and session.path == []
        assert isinstance(pilot.app.screen, ChatScreen) and pilot.app.screen.session is session


async def test_new_session_and_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    oak, *_ = await three_sessions()
    async with running(["--model", "demo", "--session", oak.id]) as pilot:
        await send(pilot, "/export markdown")
        exported = tmp_path / "oak-planting.md"
        assert exported.read_text().count("When do I plant an oak?") == 1
        assert f"Exported this session (markdown) to {exported}" in notifications(pilot)
        await send(pilot, "/export markdown")
        assert (tmp_path / "oak-planting-2.md").exists(), "an existing file is never overwritten"
        await send(pilot, f"/export openai {tmp_path / 'chat.json'}")
        assert [m["role"] for m in json.loads((tmp_path / "chat.json").read_text())] == [
            "user",
            "assistant",
        ]
        await send(pilot, "/export yaml")
        assert f"Usage: /export {'|'.join(EXPORT_FORMATS)} [PATH]" in notifications(pilot)

        await pilot.press("ctrl+n")
        await settle(pilot)
        session = app_of(pilot).conversation.session
        assert (
            session.id != oak.id
            and not session.persisted
            and "In autumn." not in screen_text(pilot)
        )
        await send(pilot, "/export json")
        assert "Nothing to export yet: send a message first." in notifications(pilot)


def test_ages_read_like_a_person_would_say_them() -> None:
    now = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    stamp = lambda delta: (now - delta).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # noqa: E731
    assert age(stamp(timedelta(seconds=20)), now) == "just now"
    assert age(stamp(timedelta(minutes=3)), now) == "3 min ago"
    assert age(stamp(timedelta(hours=1, minutes=5)), now) == "1 hour ago"
    assert age(stamp(timedelta(days=2, hours=3)), now) == "2 days ago"
    assert age(stamp(timedelta(days=400)), now) == "1 year ago"


def test_picker_snapshot(snap_compare) -> None:
    """Searching “chain” over three sessions: the bike session alone, “chain” highlighted in
    the snippet under its title, “7 msgs · 2 branches · 1 day ago” and the model on the right."""
    asyncio.run(three_sessions())
    args = build_parser().parse_args(["--model", "demo"])
    app, store = asyncio.run(build_app(args, prepare_launch(args)))
    clock = datetime(2025, 3, 2, 12, 0, tzinfo=UTC)

    async def run_before(pilot) -> None:
        await pilot.pause()
        steady_cursor(pilot)
        picker = SessionPicker(pilot.app.screen.session, now=lambda: clock)
        await pilot.app.push_screen(picker)
        picker.query_one(Input).cursor_blink = False
        await type_text(pilot, "chain")
        await searched(pilot)

    try:
        assert snap_compare(app, run_before=run_before, terminal_size=(100, 24))
    finally:
        asyncio.run(store.close())


def test_resume_does_not_mix_with_other_ways_to_choose_a_session() -> None:
    for extra in (["-c"], ["--session", "x"], ["--from", "y"]):
        args = build_parser().parse_args(["-r", *extra])
        with pytest.raises(UsageError, match="-r/--resume opens the session picker"):
            prepare_launch(args)


def test_rows_are_plain_text_without_control_sequences() -> None:
    """Titles and snippets come from users and models: never markup, never escapes."""
    info = SessionInfo(id="s", title="x", created_at=OLD, updated_at=OLD)
    summary = SessionSummary(info, 2, 1, "first\x1b]0;pwned\x07 line\nsecond", "[bold]model")
    match = SessionMatch(summary, "\x02Ti\x1b[2Jtle\x03 [red]x[/red]", "a \x02hit\x03\x1b[31m", "e")
    title, detail = title_line(match, "underline"), detail_line(match, "underline")
    assert title.plain == "Title [red]x[/red]"
    assert [title.plain[s.start : s.end] for s in title.spans if s.style == "underline"] == [
        "Title"
    ]
    assert detail.plain == "s · a hit"
    plain = detail_line(SessionMatch(summary, None, "", None), "bold").plain
    assert plain == "s · first line second"


def highlighted_id(pilot) -> str:
    return picker_of(pilot).query_one(SessionList).highlighted.summary.info.id


async def test_archiving_keeps_the_highlight_on_a_neighbour_not_the_top_row() -> None:
    """Issue 12: archiving moved the highlight to the top row, so the next ctrl+s
    archived the session the user was in."""
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "-r"]) as pilot:
        await pilot.press("down")  # rye
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert shown_ids(pilot) == [bike.id, oak.id]
        assert highlighted_id(pilot) == oak.id  # the row that followed it
        assert any("Archived: How do I bake rye bread?" in n for n in notifications(pilot))
        await pilot.press("ctrl+t")  # show the archived ones again: still on oak
        await settle(pilot)
        assert highlighted_id(pilot) == oak.id
        await pilot.press("up", "ctrl+t")  # on rye (archived), hide the archived: its neighbour
        await settle(pilot)
        assert shown_ids(pilot) == [bike.id, oak.id]
        assert highlighted_id(pilot) == oak.id


async def test_toggling_archived_keeps_the_highlight_while_searching() -> None:
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "-r"]) as pilot:
        await type_text(pilot, "do")  # "When do I…", "How do I…": two match
        await searched(pilot)
        assert len(shown_ids(pilot)) >= 2, shown_ids(pilot)
        await pilot.press("down")
        before = highlighted_id(pilot)
        await pilot.press("ctrl+t")
        await searched(pilot)
        assert highlighted_id(pilot) == before


async def test_rename_and_archive_name_the_session_they_act_on() -> None:
    oak, rye, bike = await three_sessions()
    async with running(["--model", "demo", "-r"]) as pilot:
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert "Rename “Fixing the bike”" in screen_text(pilot)


async def test_with_a_scrollbar_the_right_column_is_not_cut() -> None:
    """Issue 12: with 25+ sessions at 120 columns the scrollbar covered the counts' last letters."""
    await seed(
        *[
            (f"Session {i} about a long topic", ["q", "a"], f"2025-01-{i + 1:02d}T10:00:00.000000Z")
            for i in range(28)
        ]
    )
    async with running(["--model", "demo", "-r"], size=(120, 40)) as pilot:
        await settle(pilot)
        rows = [line for line in screen_text(pilot).splitlines() if "Session 27" in line]
        assert rows and "1 branch · " in rows[0]
        assert rows[0].split("1 branch · ")[1].split("│")[0].strip().endswith("ago")
        assert "esc close" in screen_text(pilot)


async def test_the_picker_shows_a_status_other_than_active() -> None:
    from core.paths import default_db_path
    from storage import SqliteStore

    oak, rye, bike = await three_sessions()
    store = await SqliteStore.open(default_db_path())
    try:
        await store.set_status(rye.id, "paused")
    finally:
        await store.close()
    async with running(["--model", "demo", "-r"], size=(110, 30)) as pilot:
        text = screen_text(pilot)
        assert text.count("paused · ") == 1 and "active · " not in text


def test_the_detail_line_shows_the_short_id_and_never_repeats_the_title() -> None:
    """Issue 33 items 8 and 9: an untitled session's preview line repeated its
    first message, shown as its title already; the id to type was nowhere."""
    sid = "019a2b3c-0000-7000-8000-00009f8e7d6c"
    untitled = SessionSummary(SessionInfo(sid, None, OLD, OLD), 2, 1, "plant an oak", "m")
    plain = detail_line(SessionMatch(untitled, None, "", None), "bold").plain
    assert plain == "9f8e7d6c"
    titled = SessionSummary(SessionInfo(sid, "Oaks", OLD, OLD), 2, 1, "plant an oak", "m")
    plain = detail_line(SessionMatch(titled, None, "", None), "bold").plain
    assert plain == "9f8e7d6c · plant an oak"
    hit = detail_line(SessionMatch(titled, None, "an \x02oak\x03", "e"), "bold").plain
    assert hit == "9f8e7d6c · an oak"
