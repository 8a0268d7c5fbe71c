"""A reply text of one paragraph is painted by its text part, with no segment:
looking as a segment shows it, and moving into segments, when it grows into
more, without a frame that loses its words."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.segment import ControlType, Segment
from textual.app import App, ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import Horizontal, Vertical
from textual.widgets._markdown import MarkdownParagraph
from textual.widgets.markdown import MarkdownBlock

from core.providers.base import TextDelta
from tests.tui.helpers import running, send, wait_for
from tests.tui.snapshot_apps.chat_data import EntryMaker, assistant, user
from tests.tui.test_chat_view import ChatTestApp, screen_text
from tests.tui.test_chat_view_stream import wait_rendered
from tests.tui.test_chat_view_window import settle
from tui.widgets.assistant_message import AssistantMessage
from tui.widgets.reply_view import ReplyView
from tui.widgets.segmented_markdown import LONE_CHARS, MarkdownSegment, SegmentedMarkdown

PARAGRAPHS = (
    "Plain words.",
    "Some *emphasis*, **strong**, ~~struck~~, `code`, [a link](http://x.example) "
    "and http://auto.example, then ***both*** and `more code` at the end.",
    "A sentence long enough to wrap over several lines of a narrow column, "
    "with `code` where the line breaks and **bold words** after it. " * 3,
    "hard  \nbreak, and a soft\nbreak",
    "宽字符 and 🙂 emoji in a line",
)


class SideBySide(App[None]):
    """The same text painted (left) and in segments (right), on a row's background."""

    CSS = """
    Horizontal { height: auto; }
    .row { width: 40; height: auto; background: $accent 12%; }
    """

    def __init__(self, text: str, theme: str) -> None:
        super().__init__()
        self.text = text
        self.theme = theme

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical(classes="row"):
                yield SegmentedMarkdown(self.text, id="painted")
            with Vertical(classes="row"):
                yield SegmentedMarkdown(id="segments")


def cells(segments: list[Segment]) -> list[tuple[str, object]]:
    """Each cell's character and style (however the line is cut into segments;
    without the offsets text selection reads, which count from each widget's top)."""
    return [
        (char, segment.style.clear_meta_and_links() if segment.style else None)
        for segment in segments
        for char in segment.text
    ]


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light", "ansi-dark"])
@pytest.mark.parametrize("text", PARAGRAPHS)
async def test_a_painted_paragraph_looks_as_a_segment_shows_it(text: str, theme: str) -> None:
    app = SideBySide(text, theme)
    async with app.run_test(size=(80, 20)) as pilot:
        painted = app.query_one("#painted", SegmentedMarkdown)
        segments = app.query_one("#segments", SegmentedMarkdown)
        await segments.finish(text)  # not streamed, not made with text: segments
        await pilot.pause()
        assert painted.paragraph is not None and not painted.children
        assert isinstance(segments.query_one(MarkdownBlock), MarkdownParagraph)
        assert painted.outer_size.height == segments.outer_size.height > 1
        rows = app.screen._compositor.render_strips()[: painted.outer_size.height + 1]
        for row in rows:
            left, right = list(row.crop(0, 40)), list(row.crop(40, 80))
            assert cells(left) == cells(right)


class RowsSideBySide(App[None]):
    """The same saved reply twice: painted by its row (left), and by the text
    part the row makes of it (right)."""

    CSS = "Horizontal { height: auto; } AssistantMessage { width: 40; }"

    def __init__(self, text: str, theme: str) -> None:
        super().__init__()
        self.entry = EntryMaker()(assistant(text, model="the-model"))
        self.theme = theme

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield AssistantMessage(self.entry, id="painted")
            yield AssistantMessage(self.entry, id="part")


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
@pytest.mark.parametrize("text", PARAGRAPHS[1:3])
async def test_a_row_paints_its_paragraph_as_its_text_part_shows_it(text: str, theme: str) -> None:
    app = RowsSideBySide(text, theme)
    async with app.run_test(size=(80, 24)) as pilot:
        painted = app.query_one("#painted", AssistantMessage)
        made = app.query_one("#part", AssistantMessage)
        await made._make_text_part()  # type: ignore[misc]
        await wait_for(lambda: made.paragraph is None and made._paragraph is None, pilot)
        assert painted.paragraph is not None and not painted.children
        [part] = made.children
        assert isinstance(part, SegmentedMarkdown) and part.paragraph == painted.paragraph
        app.set_focus(None)
        await pilot.pause()
        assert painted.outer_size.height == made.outer_size.height > 2
        height = painted.outer_size.height
        rows = app.screen._compositor.render_strips()[:height]
        for row in rows:
            assert cells(list(row.crop(0, 40))) == cells(list(row.crop(40, 80)))
        # Focused: the row's background under the text too.
        painted.focus()
        await pilot.pause()
        left = [cells(list(row.crop(0, 40))) for row in app.screen._compositor.render_strips()]
        made.focus()
        await pilot.pause()
        right = [cells(list(row.crop(40, 80))) for row in app.screen._compositor.render_strips()]
        assert left[:height] == right[:height]


async def test_a_short_reply_is_one_widget() -> None:
    """The widgets a short exchange adds to every layout pass: the reply row
    alone (its text part, a segment and its paragraph block were three more)."""
    app = ChatTestApp()
    async with app.run_test(size=(80, 24)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries([make(user("hi"))])
        reply = app.chat.start_reply("demo")
        reply.feed(TextDelta("echo: "))
        reply.feed(TextDelta("hi, *there*"))
        await wait_rendered(pilot, reply)
        await reply.finish(make(assistant("echo: hi, *there*")))
        await settle(pilot, app)
        assert list(reply.children) == [] and reply.paragraph is not None
        assert reply.source == "echo: hi, *there*"
        assert "echo: hi, there" in screen_text(app)
        # A saved row of one paragraph is built the same way.
        row = AssistantMessage(make(assistant("a saved **answer**")))
        await app.chat.mount(row)
        assert list(row.children) == [] and row.paragraph is not None


class TerminalModel:
    """The screen as a terminal shows it: each update the app writes goes over
    what the ones before left (a partial update changes only its lines)."""

    def __init__(self, shown: str, width: int, height: int) -> None:
        lines = (shown.splitlines() + [""] * height)[:height]
        self.rows = [list(line.ljust(width)[:width]) for line in lines]

    def write(self, update: object) -> None:
        width, height = len(self.rows[0]), len(self.rows)
        console = Console(width=width, height=height, file=io.StringIO())
        x = y = 0
        for segment in update.__rich_console__(console, console.options):  # type: ignore[attr-defined]
            if segment.control:
                for control in segment.control:
                    if control[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = control[1], control[2]
                continue
            for char in segment.text.replace("\n", ""):
                cells = cell_len(char)
                for cell in range(cells):
                    if 0 <= y < height and x + cell < width:
                        self.rows[y][x + cell] = char if cell == 0 else ""
                x += cells

    @property
    def text(self) -> str:
        return "\n".join("".join(row) for row in self.rows)


def frames_missing(app: App, words: str) -> list[str]:
    """Record every frame painted from now on after which the terminal would
    not show ``words``."""
    missing: list[str] = []
    display = app._display
    width, height = app.screen.size
    terminal = TerminalModel(screen_text(app), width, height)

    def recorded(screen, renderable):  # type: ignore[no-untyped-def]
        display(screen, renderable)
        if renderable is None:  # nothing was written
            return
        terminal.write(renderable)
        if words not in terminal.text:
            missing.append(terminal.text)

    app._display = recorded  # type: ignore[method-assign]
    return missing


def frame_before(app: App, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``MarkdownSegment.<method>`` (an append, an update) start only after a
    frame is painted: a frame in the middle of the move into segments."""
    original = getattr(MarkdownSegment, method)

    def after_a_frame(segment: MarkdownSegment, markdown: str) -> AwaitComplete:
        async def later() -> None:
            painted = asyncio.Event()
            app.screen.call_after_refresh(painted.set)
            await painted.wait()
            await original(segment, markdown)

        return AwaitComplete(later())

    monkeypatch.setattr(MarkdownSegment, method, after_a_frame)


async def painted_reply(pilot, app: ChatTestApp, text: str) -> ReplyView:  # type: ignore[no-untyped-def]
    """A reply streaming ``text`` (one paragraph), painted by its row."""
    reply = app.chat.start_reply("demo")
    reply.feed(TextDelta(text))
    await wait_rendered(pilot, reply)
    assert reply.paragraph is not None and not reply.children
    return reply


async def test_a_paragraph_that_grows_into_more_moves_into_segments_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = ChatTestApp()
    async with app.run_test(size=(80, 24)) as pilot:
        frame_before(app, "append", monkeypatch)
        reply = await painted_reply(pilot, app, "The first paragraph, painted.")
        missing = frames_missing(app, "The first paragraph, painted.")
        reply.feed(TextDelta("\n\n- then a list\n"))
        await wait_rendered(pilot, reply)
        reply.feed(TextDelta("- of two items\n\nAnd words after it."))
        await wait_rendered(pilot, reply)
        text = (
            "The first paragraph, painted.\n\n- then a list\n- of two items\n\nAnd words after it."
        )
        await reply.finish(EntryMaker()(assistant(text)))
        await settle(pilot, app)
        [part] = reply.children
        assert isinstance(part, SegmentedMarkdown) and reply.paragraph is None
        assert part.paragraph is None and len(part.segments) == 1
        assert part.source == reply.source == text
        shown = screen_text(app)
        assert "• of two items" in shown and "And words after it." in shown
        assert missing == []


async def test_a_painted_reply_saved_as_more_shows_what_was_saved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The saved text is not the one paragraph streamed (a stream cut short, its
    end saved): segments show it, and the painted words stay until they do."""
    app = ChatTestApp()
    async with app.run_test(size=(80, 24)) as pilot:
        frame_before(app, "update", monkeypatch)
        reply = await painted_reply(pilot, app, "Words streamed.")
        missing = frames_missing(app, "Words streamed.")
        saved = "Words streamed.\n\n```\ncode saved\n```\n"
        await reply.finish(EntryMaker()(assistant(saved)))
        await settle(pilot, app)
        [part] = reply.children
        assert isinstance(part, SegmentedMarkdown) and part.paragraph is None
        assert part.source == saved and "code saved" in screen_text(app)
        assert missing == []


async def test_a_paragraph_longer_than_the_limit_is_in_segments() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(80, 24)) as pilot:
        reply = app.chat.start_reply("demo")
        words = "word " * (LONE_CHARS // 5)
        reply.feed(TextDelta(words[: LONE_CHARS // 2]))
        await wait_rendered(pilot, reply)
        assert reply.paragraph is not None and not reply.children
        reply.feed(TextDelta(words[LONE_CHARS // 2 :] + "more"))
        await wait_rendered(pilot, reply)
        [part] = reply.children
        assert isinstance(part, SegmentedMarkdown) and part.paragraph is None
        assert part.source == words + "more"


async def test_a_link_in_a_painted_paragraph_opens() -> None:
    app = ChatTestApp()
    opened: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_url = lambda url, **_: opened.append(url)  # type: ignore[method-assign]
        make = EntryMaker()
        await app.chat.set_entries([make(assistant("[docs](http://docs.example) here"))])
        await settle(pilot, app)
        [row] = app.chat.message_widgets
        assert isinstance(row, AssistantMessage) and row.paragraph is not None
        await pilot.click(row, offset=(2, 1))  # the paragraph's first word, under the header
        assert opened == ["http://docs.example"]


async def test_link_patterns_are_warmed_in_a_thread_when_nothing_was_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After launch, while the first message is being written; not once a reply
    was asked for (its request and first words would share the interpreter)."""
    import threading

    import tui.modes.app

    warmed: list[str] = []
    monkeypatch.setattr(tui.modes.app, "LINKS_WARM_AFTER", 0.01)
    monkeypatch.setattr(
        tui.modes.app, "warm_link_patterns", lambda: warmed.append(threading.current_thread().name)
    )
    async with running() as pilot:
        await wait_for(lambda: warmed == ["warm-links"], pilot)
    warmed.clear()
    monkeypatch.setattr(tui.modes.app, "LINKS_WARM_AFTER", 60)
    async with running() as pilot:
        await send(pilot, "hello")
        pilot.app._warm_link_patterns()  # type: ignore[attr-defined]
        for thread in threading.enumerate():
            if thread.name == "warm-links":
                thread.join()
        assert warmed == []
