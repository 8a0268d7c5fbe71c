"""A long path opens with a bounded window of rows; scrolling brings in the rest without jumps."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widget import Widget

from tests.tui.snapshot_apps.chat_data import EntryMaker, assistant, long_history, user
from tests.tui.test_chat_view import screen_text
from tui.widgets.chat_view import ChatView
from tui.widgets.message_widget import MessageWidget


class WindowApp(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatView()

    @property
    def chat(self) -> ChatView:
        return self.query_one(ChatView)


async def settle(pilot, app: App) -> None:
    """Wait until rows being mounted and images being loaded are done (a live reply's
    render loop runs until the reply is finished, so it is not waited for)."""
    for _ in range(3):
        await pilot.pause()
        busy = [worker for worker in app.workers if worker.group != "reply-render"]
        if busy:  # (an empty list would mean "all workers")
            await app.workers.wait_for_complete(busy)
    await pilot.pause()


def first_row_in_view(chat: ChatView) -> MessageWidget:
    top = chat.region.y
    for widget in chat.message_widgets:
        region = widget.region
        if region.height and region.y >= top:
            return widget
    raise AssertionError("no row in view")


def watch_layout(app: App, widget: Widget) -> list[int]:
    """Record ``widget``'s screen row after every layout pass from now on."""
    positions: list[int] = []
    screen = app.screen
    original = screen._refresh_layout

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = original(*args, **kwargs)
        if widget.is_attached:
            positions.append(widget.region.y)
        return result

    screen._refresh_layout = recording  # type: ignore[method-assign]
    return positions


async def test_opening_ten_thousand_entries_mounts_a_bounded_window() -> None:
    app = WindowApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.chat.set_entries(long_history(10_000))
        await settle(pilot, app)
        lo, hi = app.chat.window
        assert hi == 10_000 and app.chat.row_count == 10_000
        assert hi - lo <= ChatView.INITIAL_ROWS + 2 * ChatView.BATCH_ROWS
        assert len(app.query(MessageWidget)) == hi - lo
        assert len(list(app.screen.walk_children())) < 600
        text = screen_text(app)
        assert "Question 9998" in text
        assert app.chat.scroll_y == app.chat.max_scroll_y  # at the bottom


async def test_scrolling_up_loads_older_rows_without_moving_the_view() -> None:
    app = WindowApp()
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.chat
        await chat.set_entries(long_history(2_000))
        await settle(pilot, app)
        first_lo = chat.window[0]
        for _ in range(6):
            chat.scroll_to(y=0, animate=False)
            await pilot.pause()
            anchor = first_row_in_view(chat)
            before = anchor.region.y
            positions = watch_layout(app, anchor)
            await settle(pilot, app)
            # Not one layout pass showed the row anywhere else.
            assert set(positions) <= {before}, positions
            assert anchor.region.y == before
        assert chat.window[0] < first_lo
        assert chat.scroll_y > 0  # older rows went in above the view


class SmallWindowChat(ChatView):
    MAX_ROWS = 20


class SmallWindowApp(WindowApp):
    def compose(self) -> ComposeResult:
        yield SmallWindowChat()


async def test_window_stays_bounded_however_far_the_user_scrolls() -> None:
    app = SmallWindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        make = EntryMaker()
        await chat.set_entries([make(user(f"message {n}\nsecond line")) for n in range(1_000)])
        await settle(pilot, app)
        for _ in range(25):
            chat.scroll_to(y=0, animate=False)
            await settle(pilot, app)
        lo, hi = chat.window
        assert lo < 1_000 - 150
        # Rows within a few screens of the view stay; everything else was unmounted.
        assert hi - lo <= 60
        assert hi < 1_000  # the newest rows were unmounted
        assert len(app.query(MessageWidget)) == hi - lo
        # Scrolling back down brings the newer rows in again.
        for _ in range(40):
            chat.scroll_to(y=chat.max_scroll_y, animate=False)
            await settle(pilot, app)
            if chat.window[1] == 1_000:
                break
        assert chat.window[1] == 1_000
        chat.scroll_to(y=chat.max_scroll_y, animate=False)
        await settle(pilot, app)
        assert "message 999" in screen_text(app)


async def test_end_jumps_back_to_the_newest_rows_and_follows() -> None:
    app = WindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        entries = long_history(1_000)
        await chat.set_entries(entries)
        await settle(pilot, app)
        await chat.scroll_to_entry("e000010")
        await settle(pilot, app)
        assert chat.window[0] <= 9 < chat.window[1] < 1_000
        assert "Question 10" in screen_text(app)
        chat.focus()
        await pilot.press("end")
        await settle(pilot, app)
        assert chat.window[1] == 1_000
        assert chat.scroll_y == chat.max_scroll_y
        make = EntryMaker()
        make.count = 5_000
        await chat.append_entry(make(assistant("a brand new answer at the bottom")))
        await settle(pilot, app)
        assert "a brand new answer at the bottom" in screen_text(app)
        await pilot.press("home")
        await settle(pilot, app)
        assert chat.window[0] == 0 and chat.scroll_y == 0
        assert "Question 0" in screen_text(app)


async def test_sending_from_far_up_shows_the_end_of_the_path() -> None:
    app = WindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await chat.set_entries(long_history(500))
        await settle(pilot, app)
        await chat.scroll_to_entry("e000002")
        await settle(pilot, app)
        make = EntryMaker()
        make.count = 9_000
        await chat.append_entry(make(user("a new question")))
        await settle(pilot, app)
        assert chat.window[1] == chat.row_count == 501
        assert "a new question" in screen_text(app)


async def test_appending_while_scrolled_up_does_not_move_the_view() -> None:
    app = WindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await chat.set_entries(long_history(40))
        await settle(pilot, app)
        chat.scroll_to(y=chat.max_scroll_y - 40, animate=False)
        await settle(pilot, app)
        y = chat.scroll_y
        make = EntryMaker()
        make.count = 100
        await chat.append_entry(make(assistant("new row below")))
        await settle(pilot, app)
        assert chat.scroll_y == y


async def test_a_new_path_replaces_the_old_one_and_a_live_reply() -> None:
    app = WindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await chat.set_entries(long_history(30))
        reply = chat.start_reply("demo")
        await settle(pilot, app)
        make = EntryMaker()
        await chat.set_entries([make(user("other branch"))])
        await settle(pilot, app)
        assert chat.reply is None and not reply.is_attached
        assert [row.entry_id for row in chat.message_widgets] == ["e000001"]
        assert "other branch" in screen_text(app)
        # The abandoned reply can still be finished without effect.
        await reply.finish(make(assistant("late")))
        assert chat.row_count == 1


async def test_a_reply_started_far_up_moves_the_view_to_the_end() -> None:
    app = WindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        await chat.set_entries(long_history(300))
        await settle(pilot, app)
        await chat.scroll_to_entry("e000002")
        await settle(pilot, app)
        reply = chat.start_reply("demo")
        make = EntryMaker()
        make.count = 1_000
        await reply.finish(make(assistant("finished before it was even mounted")))
        await settle(pilot, app)
        assert chat.window[1] == chat.row_count == 301
        assert chat.message_widgets[-1] is reply and chat.reply is None
        assert "finished before it was even mounted" in screen_text(app)


async def test_a_long_conversation_keeps_few_rows_mounted_at_the_bottom() -> None:
    app = WindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        make = EntryMaker()
        await chat.set_entries([])
        for n in range(50):
            await chat.append_entry(make(user(f"question {n}")))
            await chat.append_entry(make(assistant(f"answer {n}\n\nwith a second paragraph")))
        await settle(pilot, app)
        lo, hi = chat.window
        assert hi == 100 and hi - lo <= ChatView.FOLLOW_ROWS + ChatView.BATCH_ROWS
        assert "answer 49" in screen_text(app)
        chat.scroll_to(y=0, animate=False)
        await settle(pilot, app)
        assert chat.window[0] < lo  # scrolling up brings them back


async def test_rows_pushed_far_up_by_a_reply_go_with_the_next_message() -> None:
    """Unmounting rows costs a layout pass over the whole window. At the bottom,
    the rows a short reply pushes far up are dropped by the next message's mount
    (one pass for both); a reply that pushes up a batch of them drops them itself."""
    app = WindowApp()
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.chat
        make = EntryMaker()
        await chat.set_entries([])

        async def reply_with(text: str) -> None:
            reply = chat.start_reply("demo")
            await settle(pilot, app)
            await reply.finish(make(assistant(text)))
            await settle(pilot, app)

        for n in range(30):
            await chat.append_entry(make(user(f"question {n}")))
            await reply_with(f"answer {n}")
        dropped = []
        mounted = chat.window[1] - chat.window[0]
        for n in range(30, 40):
            lo = chat.window[0]
            await chat.append_entry(make(user(f"question {n}")))
            dropped.append(chat.window[0] - lo)
            lo = chat.window[0]
            await reply_with(f"answer {n}")
            assert chat.window[0] == lo  # the short reply dropped nothing itself
        assert all(dropped)  # each message's mount dropped what the last reply pushed up
        assert chat.window[1] - chat.window[0] <= mounted + 2  # the window does not grow

        await chat.append_entry(make(user("a long one")))
        lo = chat.window[0]
        await reply_with("\n\n".join(f"paragraph {k}" for k in range(60)))
        assert chat.window[0] - lo >= ChatView.BATCH_ROWS
        assert "paragraph 59" in screen_text(app)
