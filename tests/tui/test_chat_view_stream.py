"""A reply streamed through ReplyView: batched, segmented, finished with the saved entry."""

from __future__ import annotations

import asyncio
import random
import time

import pytest
from textual.widget import Widget
from textual.widgets import Input, Markdown, Static
from textual.widgets._markdown import MarkdownParagraph
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from core.chat.checkpoint import STOPPED
from core.providers.base import (
    Done,
    ErrorEvent,
    ProviderError,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)
from core.sessions.content import TextContent, ThinkingContent, ToolCallContent
from core.sessions.messages import Message, Usage
from tests.tui.helpers import wait_for
from tests.tui.snapshot_apps.chat_data import (
    EntryMaker,
    assistant,
    chunks,
    reply_tokens,
    tool_result,
    user,
)
from tests.tui.test_chat_view import ChatTestApp, screen_text
from tests.tui.test_chat_view_window import settle
from tui.internals.keys_first import ui_first
from tui.internals.textual_private import layout_count
from tui.widgets import reply_view
from tui.widgets._markdown_split import split_markdown
from tui.widgets.reply_view import FIRST_FRAME_CHARS, ReplyView
from tui.widgets.segmented_markdown import SHOWN_TAIL_CHARS, MarkdownSegment, SegmentedMarkdown
from tui.widgets.thinking_block import ThinkingBlock
from tui.widgets.tool_call_card import ToolCallCard


async def wait_rendered(pilot, reply: ReplyView) -> None:
    """Let the render loop catch up with everything fed so far (a frame budget at
    a time: on a loaded machine that takes a while, so the deadline is generous)."""
    deadline = time.monotonic() + 60
    while not reply.caught_up and time.monotonic() < deadline:
        await pilot.pause(0.02)
    assert reply.caught_up
    await pilot.pause()


def layout_requests(widget: Widget) -> list[None]:
    """Record every layout pass ``widget`` asks for itself from now on."""
    asked: list[None] = []
    refresh = widget.refresh

    def recorded(*regions, layout: bool = False, **kwargs):  # type: ignore[no-untyped-def]
        if layout:
            asked.append(None)
        return refresh(*regions, layout=layout, **kwargs)

    widget.refresh = recorded  # type: ignore[method-assign]
    return asked


async def wait_made(pilot, part: SegmentedMarkdown) -> None:
    """Until the lazy segments of a finished reply are made in the background."""
    deadline = time.monotonic() + 60
    while not part.all_made and time.monotonic() < deadline:
        await pilot.pause(0.02)
    assert part.all_made


async def streamed_and_finished(
    pilot, app: ChatTestApp, tokens: list[str], *, piece_chars: int
) -> ReplyView:
    """A reply streamed in pieces of ``piece_chars``, finished with its entry,
    every segment made (none lazy) and the view settled."""
    reply = app.chat.start_reply("demo")
    text = "".join(tokens)
    for piece in chunks(text, piece_chars):
        reply.feed(TextDelta(piece))
        await asyncio.sleep(0)
    await wait_rendered(pilot, reply)
    await reply.finish(EntryMaker()(assistant(text)))
    await wait_made(pilot, reply.text_parts[0])
    await settle(pilot, app)
    return reply


def block_signature(markdown: Markdown) -> list[tuple[str, str]]:
    """Block types and their text: what a reader sees, structure-wise."""
    signature = []
    for block in markdown.query(MarkdownBlock):
        text = block.code if isinstance(block, MarkdownFence) else block._content.plain
        signature.append((type(block).__name__, text))
    return signature


async def test_long_streamed_reply_is_segmented_and_finishes_with_the_full_text() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries([make(user("write a lot"))])
        reply = app.chat.start_reply("demo/model")
        tokens = reply_tokens(6_000)
        for index, token in enumerate(tokens):
            reply.feed(TextDelta(token))
            if index % 50 == 0:
                await asyncio.sleep(0)
        text = "".join(tokens)
        await wait_rendered(pilot, reply)
        assert reply.source == text  # shown while streaming, before finish
        entry = make(assistant(text, usage=Usage(output_tokens=6_000)))
        await reply.finish(entry)
        await pilot.pause()
        [part] = reply.text_parts
        assert part.source == text
        segments = part.segments
        assert len(segments) == len(split_markdown(text)) > 3
        assert "".join(segment.source for segment in segments) == text
        # Each segment shows what a fresh parse of its text shows.
        for segment, source in zip(segments, split_markdown(text), strict=False):
            await segment.materialize()  # if it was mounted lazily
            fresh = MarkdownSegment(source)
            await app.mount(fresh)
            assert block_signature(segment) == block_signature(fresh)
            await fresh.remove()
        # The finished reply is a row of the chat now.
        assert app.chat.message_widgets[-1] is reply and reply.entry_id == entry.id
        assert app.chat.reply is None
        assert "6,000 tokens" in reply.header_text


MARKDOWN_PIECES = (
    "A paragraph with *emphasis* and `code`.\n\n",
    "Title\n=====\n\n",
    "Setext or not\n---\n\n",
    "# Heading\n\n",
    "- one\n- two\n  continued\n\n",
    "1. first\n\n2. second, loose\n\n",
    "> quoted\n> lines\n\n",
    "```python\nprint('x')\n\n# not a heading\n```\n\n",
    "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n",
    "lazy\ncontinuation line\n",
    "    indented code\n\n",
    "see [the docs][ref] and [x](http://x.example)\n\n",
    "[ref]: http://ref.example\n\n",
    "<div>\nhtml block\n</div>\n\n",
    "***\n\n",
)


async def test_a_finished_reply_shows_what_a_parse_of_its_whole_text_shows() -> None:
    """Replies of mixed Markdown streamed in random pieces: once finished, their
    blocks are what a fresh parse of the whole text makes (kept from the stream
    when that is so, parsed again when it is not: a link defined after its use)."""
    rng = random.Random(13)
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        for _ in range(24):
            text = "".join(rng.choice(MARKDOWN_PIECES) for _ in range(rng.randint(1, 8)))
            reply = app.chat.start_reply("demo")
            start = 0
            while start < len(text):
                end = start + rng.randint(1, 40)
                reply.feed(TextDelta(text[start:end]))
                start = end
                if rng.random() < 0.5:
                    await wait_rendered(pilot, reply)
            await wait_rendered(pilot, reply)
            await reply.finish(EntryMaker()(assistant(text)))
            await settle(pilot, app)
            fresh = MarkdownSegment(text)
            await app.mount(fresh)
            if reply.paragraph is not None:  # one paragraph: painted, as its block shows it
                [block] = fresh.query(MarkdownBlock)
                assert isinstance(block, MarkdownParagraph), text
                assert (reply.paragraph, list(reply.children)) == (block._content, []), text
            else:
                [part] = reply.text_parts
                [segment] = part.segments
                assert block_signature(segment) == block_signature(fresh), text
            await fresh.remove()
            await reply.remove()


async def rests_after_renders(events) -> list[float]:  # type: ignore[no-untyped-def]
    """The pauses the render loop takes after renders that left text queued,
    for a reply fed ``events`` at once (more than a first render takes)."""
    rests: list[float] = []
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        reply = app.chat.start_reply("demo")
        rest_after = reply._rest_after

        def recorded(took: float) -> float:
            rests.append(rest_after(took))
            return rests[-1]

        reply._rest_after = recorded  # type: ignore[method-assign]
        for event in events:
            reply.feed(event)
        await wait_rendered(pilot, reply)
    return rests


async def test_the_render_loop_rests_for_the_reader_only_while_the_stream_comes_in() -> None:
    """A render that leaves text queued is followed by a rest as long as it took,
    which the stream's reader uses; once the stream is all in, nothing reads
    it: the rest went idle (130 ms before the last words of a long reply)."""
    text = "Some words in a paragraph. " * (2 * FIRST_FRAME_CHARS // 27)
    coming = await rests_after_renders([TextDelta(text)])
    assert len(coming) == 1 and coming[0] > 0
    assert await rests_after_renders([TextDelta(text), Done("stop")]) == [0.0]


async def test_the_rest_of_a_stream_all_in_is_rendered_without_waiting_a_frame(
    monkeypatch,
) -> None:
    """After the first words, a short reply whose end has come (its ``Done``) or
    been saved is rendered at once: nothing more comes to batch into a later
    frame (the frame would be a wait before the reply is whole)."""
    monkeypatch.setattr(reply_view, "FRAME_SECONDS", 3600.0)  # a frame never ends here
    for ending in ("done", "saved"):
        app = ChatTestApp()
        async with app.run_test(size=(100, 40)) as pilot:
            reply = app.chat.start_reply("demo")
            reply.feed(TextDelta("echo"))
            await wait_for(lambda: reply.renders == 1 and reply.caught_up, pilot)  # noqa: B023
            reply.feed(TextDelta(": the rest"))
            finishing = None
            if ending == "done":
                reply.feed(Done("stop"))
            else:
                finishing = asyncio.ensure_future(
                    reply.finish(EntryMaker()(assistant("echo: the rest")))
                )
            await wait_for(lambda: "echo: the rest" in screen_text(app), pilot)  # noqa: B023
            if finishing is not None:
                await finishing


@pytest.mark.parametrize(
    ("deltas", "first"),
    [
        (["One paragraph of words.\n\nThe next one."], "One paragraph of words.\n\n"),
        (["\n\nAfter a blank start.\n\nMore."], "\n\nAfter a blank start.\n\n"),
        (["Its blank line comes\n", "\nin two deltas."], "Its blank line comes\n\n"),
        (["A paragraph with no end yet"], "A paragraph with no end yet"),
    ],
)
async def test_the_first_render_takes_the_first_paragraph(deltas, first) -> None:
    """Text that came at once: the first render makes the first paragraph only,
    which the row paints itself (no block to mount before the first words)."""
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        reply = app.chat.start_reply("demo")
        for delta in deltas:
            reply.feed(TextDelta(delta))
        await wait_rendered(pilot, reply)
        assert reply.first_render_chars == len(first)
        assert reply.source == "".join(deltas)


async def test_stream_readers_wait_from_the_first_event_until_the_first_render(
    monkeypatch,
) -> None:
    """The row's mount and its first render do not wait for a reader's slice
    at each hop: a reader's next turn comes once the first words are made and
    painted (not at the screen update timer's next tick)."""
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)  # released by the render, not by time
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        reply = app.chat.start_reply("demo")
        await pilot.pause()
        assert not ui_first.held
        frames: list[str] = []
        display = app._display

        def recorded(screen, update):  # type: ignore[no-untyped-def]
            display(screen, update)
            frames.append(screen_text(app))

        monkeypatch.setattr(app, "_display", recorded)
        first = "The first words " + "and more words " * 20 + "to the end.\n\n"  # 4 lines
        reply.feed(TextDelta(first + "And more of them."))
        assert ui_first.held
        await asyncio.wait_for(ui_first.reader_turn(), 10)
        assert reply.renders == 1 and reply.first_render_chars == len(first)
        assert frames and "The first words" in frames[-1] and "to the end." in frames[-1]
        await wait_rendered(pilot, reply)
        assert "And more of them." in screen_text(app)


async def test_a_reply_finished_as_streamed_keeps_its_blocks() -> None:
    """The saved text is the streamed text: the blocks on screen stay (no second
    parse, no remount, no layout pass for it)."""
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        reply = app.chat.start_reply("demo")
        text = "Some words.\n\n- a list\n- of two\n"
        reply.feed(TextDelta(text))
        await wait_rendered(pilot, reply)
        blocks = list(reply.query(MarkdownBlock))
        await reply.finish(EntryMaker()(assistant(text)))
        assert list(reply.query(MarkdownBlock)) == blocks
        other = app.chat.start_reply("demo")
        other.feed(TextDelta(text))
        await wait_rendered(pilot, other)
        blocks = list(other.query(MarkdownBlock))
        await other.finish(EntryMaker()(assistant(text + "[x]: http://x.example\n")))
        assert not set(other.query(MarkdownBlock)) & set(blocks)


async def test_a_reply_far_ahead_of_the_screen_makes_only_its_tail() -> None:
    """Text that arrived all at once: the first render takes a small part (the
    first words show at once), the next everything, and the segments that
    scroll out of view before they are ever seen are mounted without blocks,
    made when they come into view; the text is whole all along."""
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        make = EntryMaker()
        await app.chat.set_entries([make(user("write a lot"))])
        reply = app.chat.start_reply("demo/model")
        text = "".join(reply_tokens(12_000))
        assert len(text) > 5 * SHOWN_TAIL_CHARS
        reply.feed(TextDelta(text))
        await wait_rendered(pilot, reply)
        assert reply.source == text
        assert reply.renders >= 2 and reply.first_render_chars <= FIRST_FRAME_CHARS
        await settle(pilot, app)
        segments = reply.text_parts[0].segments
        lazy = [segment for segment in segments if segment.is_lazy]
        assert len(lazy) >= 3 and not segments[-1].is_lazy
        assert all(not segment.children for segment in lazy)
        # The tail is on screen, made of blocks.
        assert "Part 0" not in screen_text(app) and segments[-1].children
        # Scrolling to the top makes the first segments' blocks, as a fresh parse would.
        app.chat.scroll_home(animate=False)
        await settle(pilot, app)
        await settle(pilot, app)
        first = segments[0]
        assert not first.is_lazy and "Part 0" in screen_text(app)
        fresh = MarkdownSegment(first.source)
        await reply.text_parts[0].mount(fresh)
        await settle(pilot, app)
        assert block_signature(first) == block_signature(fresh)
        assert first.outer_size.height == fresh.outer_size.height
        await fresh.remove()
        await reply.finish(make(assistant(text)))
        assert reply.text_parts[0].source == text
        # Once the reply is complete, the rest are made in the background.
        await wait_made(pilot, reply.text_parts[0])
        assert all(segment.children for segment in reply.text_parts[0].segments)


async def test_finished_segments_keep_true_heights_when_the_width_changes() -> None:
    """A finished segment measures its height once per width (layout passes
    while a reply streams skip it): after a resize, each is as tall as a fresh
    segment of the same text at the new width."""
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        reply = await streamed_and_finished(pilot, app, reply_tokens(6_000), piece_chars=700)
        part = reply.text_parts[0]
        wide = [segment.outer_size.height for segment in part.segments]
        await pilot.resize_terminal(60, 40)
        await settle(pilot, app)
        narrow = [segment.outer_size.height for segment in part.segments]
        assert len(narrow) > 3 and all(n > w for n, w in zip(narrow, wide, strict=True))
        for segment in part.segments[:3]:
            fresh = MarkdownSegment(segment.source)
            await part.mount(fresh)
            await settle(pilot, app)
            assert fresh.size.width == segment.size.width
            assert fresh.outer_size.height == segment.outer_size.height
            await fresh.remove()


@pytest.mark.patched
async def test_a_finished_segment_is_not_measured_again_at_every_render(monkeypatch) -> None:
    """Its measured height holds while nothing in it changes: the layout passes
    of a reply streaming on after it do not measure it again."""
    measures: dict[int, list[tuple[int, int, int]]] = {}
    """Per settled segment: (piece being streamed, width, its layout count) at each measure."""
    piece_number = 0
    measure = Markdown.get_content_height

    def counted(self, container, viewport, width):  # type: ignore[no-untyped-def]
        if isinstance(self, MarkdownSegment) and self._settled:
            measures.setdefault(id(self), []).append((piece_number, width, layout_count(self)))
        return measure(self, container, viewport, width)

    monkeypatch.setattr(Markdown, "get_content_height", counted)
    app = ChatTestApp()
    async with app.run_test(size=(100, 40)) as pilot:
        reply = app.chat.start_reply("demo")
        for number, piece in enumerate(chunks("".join(reply_tokens(8_000)), 1_000)):
            piece_number = number  # read by ``counted``
            renders = reply.renders
            reply.feed(TextDelta(piece))
            await wait_rendered(pilot, reply)
            assert reply.renders > renders
        assert reply.renders >= 30 and len(measures) >= 5
        for seen in measures.values():
            # Measured once per change of its blocks (as they finish mounting,
            # over as many passes as a loaded machine spreads them: not counted)...
            sizes = [(width, count) for _, width, count in seen]
            assert len(set(sizes)) == len(sizes), seen
            # ...and, pieces later, again only if hidden then shown: not per render.
            settled_at = seen[0][0]
            assert len([m for m in seen if m[0] > settled_at + 1]) <= 1, seen


async def test_far_segments_hide_their_blocks_and_come_back() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = await streamed_and_finished(pilot, app, reply_tokens(8_000), piece_chars=400)
        segments = reply.text_parts[0].segments
        hidden = [segment for segment in segments if segment.is_hidden]
        assert hidden and segments[-1] not in hidden
        assert all(not child.display for segment in hidden for child in segment.children)
        heights = [segment.outer_size.height for segment in segments]
        app.chat.scroll_home(animate=False)
        await settle(pilot, app)
        assert not segments[0].is_hidden
        assert segments[0].outer_size.height == heights[0]
        assert "Part 0" in screen_text(app)


async def test_a_segment_is_hidden_only_at_the_height_its_blocks_measure() -> None:
    """A segment whose blocks changed since its last layout pass is not hidden
    (its height on screen is a pass behind): hidden, it would keep that wrong
    height until shown again. After the pass it is, at its true height."""
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        segment = MarkdownSegment("One paragraph.\n\nAnother one.")
        await app.chat.mount(segment)
        await settle(pilot, app)
        before = segment.region.height
        assert before > 0
        await segment.mount(Static("A line laid out at the next pass."))
        segment.set_hidden(True)
        assert not segment.is_hidden
        await settle(pilot, app)
        assert segment.region.height == before + 1
        segment.set_hidden(True)
        assert segment.is_hidden and segment.styles.height.value == before + 1


async def test_far_segments_hide_while_lazy_ones_wait_for_the_reply_to_end() -> None:
    """Segments streamed through the screen and left far above it hide their
    blocks while the reply still streams, though segments that came too fast to
    be seen wait, blockless, to be made: layout passes skip both kinds."""
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = app.chat.start_reply("demo")
        tokens = reply_tokens(12_000)
        half = len(tokens) // 2
        for piece in chunks("".join(tokens[:half]), 300):  # seen as it streams
            reply.feed(TextDelta(piece))
            await wait_rendered(pilot, reply)
        reply.feed(TextDelta("".join(tokens[half:])))  # far ahead of the screen
        await wait_rendered(pilot, reply)
        await settle(pilot, app)
        part = reply.text_parts[0]
        part.update_visibility(0, app.size.height)
        await settle(pilot, app)
        segments = part.segments
        assert any(segment.is_lazy for segment in segments) and not reply.is_finished
        assert segments[0].is_hidden and not segments[0].is_lazy
        await reply.finish(EntryMaker()(assistant("".join(tokens))))


async def test_thinking_text_and_tool_calls_stream_then_match_the_entry() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 50)) as pilot:
        make = EntryMaker()
        reply = app.chat.start_reply("demo/model")
        events = [
            ThinkingDelta("Let me think"),
            ThinkingDelta(" about files."),
            ThinkingDelta(signature="sig"),
            TextDelta("I will list "),
            TextDelta("the files."),
            ToolCallDelta(0, id="call_9", name="list_", arguments='{"pa'),
            ToolCallDelta(0, name="files", arguments='th": "src"}'),
            UsageEvent(Usage(input_tokens=10, output_tokens=20)),
            Done("tool_use"),
        ]
        for event in events:
            reply.feed(event)
        await wait_rendered(pilot, reply)
        card = reply.query_one(ToolCallCard)
        assert card.tool_name == "list_files" and card.arguments_text == '{"path": "src"}'
        assert reply.query_one(ThinkingBlock).text == "Let me think about files."
        call = ToolCallContent("call_9", "list_files", {"path": "src"}, '{"path": "src"}')
        message = Message(
            role="assistant",
            content=(
                ThinkingContent("Let me think about files.", "sig"),
                TextContent("I will list the files."),
                call,
            ),
            model="demo/model",
            usage=Usage(input_tokens=10, output_tokens=20),
            stop_reason="tool_use",
        )
        entry = make(message)
        await reply.finish(entry)
        await pilot.pause()
        # The same widgets, now showing the saved blocks.
        assert reply.query_one(ToolCallCard) is card
        assert '"path": "src"' in card.arguments_text and not card.live
        # The result arrives as its own entry and lands in the card.
        await app.chat.append_entry(make(tool_result("call_9", "a.py\nb.py")))
        await pilot.pause()
        assert card.result_text == "a.py\nb.py"
        text = screen_text(app)
        assert "⚙ list_files ✓" in text and "a.py" in text and "I will list the files." in text


async def test_finish_with_different_content_shows_the_saved_message() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = app.chat.start_reply("demo")
        reply.feed(TextDelta("partial text that will be replaced"))
        await wait_rendered(pilot, reply)
        entry = EntryMaker()(assistant("the saved text", thinking="saved thinking"))
        await reply.finish(entry)
        await pilot.pause()
        assert [
            type(part)
            for part in reply.children
            if isinstance(part, (ThinkingBlock, SegmentedMarkdown))
        ] == [
            ThinkingBlock,
            SegmentedMarkdown,
        ]
        assert reply.source == "the saved text"
        assert "partial text" not in screen_text(app)


async def test_escape_sequences_split_across_deltas_never_show() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = app.chat.start_reply("demo")
        for piece in ["plain \x1b", "[31", "mred\x1b]8;;http", "s://x\x07link [bold]b[/bold]"]:
            reply.feed(TextDelta(piece))
            await wait_rendered(pilot, reply)
        assert reply.source == "plain redlink [bold]b[/bold]"
        text = screen_text(app)
        assert "plain redlink [bold]b[/bold]" in text and "\x1b" not in text


async def test_waiting_countdown_until_content_arrives() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = app.chat.start_reply("demo")
        reply.show_waiting(5, "rate limited [bold]x[/bold]\x1b[2J")
        await pilot.pause()
        text = screen_text(app)
        assert "⟳ rate limited [bold]x[/bold] — retrying in 5 s" in text
        reply.feed(TextDelta("here it is"))
        await wait_rendered(pilot, reply)
        assert "retrying" not in screen_text(app)
        assert "here it is" in screen_text(app)


async def test_errors_show_at_once_and_are_reported_when_finished() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        reply = app.chat.start_reply("demo")
        reply.feed(TextDelta("Half an ans"))
        reply.feed(ErrorEvent(ProviderError("overloaded", "try later", status=529)))
        await wait_rendered(pilot, reply)
        assert (
            "✗ error: the provider is overloaded (HTTP 529): try later · press ctrl+r to retry"
            in screen_text(app)
        )
        entry = make(
            assistant(
                "Half an ans", stop_reason="error", error="the provider is overloaded (HTTP 529)"
            )
        )
        await reply.finish(entry)
        await pilot.pause()
        assert app.errors == ["the provider is overloaded (HTTP 529)"]
        assert "press ctrl+r to retry" in screen_text(app)


async def test_a_header_that_stays_on_one_line_is_repainted_without_a_layout_pass() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(60, 20)) as pilot:
        reply = app.chat.start_reply("demo")
        reply.feed(TextDelta("Hi."))
        await wait_rendered(pilot, reply)
        await settle(pilot, app)
        asked = layout_requests(reply)
        reply.feed(UsageEvent(Usage(input_tokens=3, output_tokens=2)))
        await wait_rendered(pilot, reply)
        assert "2 tokens" in reply.header_text and asked == []
        await reply.finish(EntryMaker()(assistant("Hi.", model="m" * 80)))
        assert asked  # it wraps now
        await settle(pilot, app)
        lines = screen_text(app).splitlines()
        top = reply.content_region.y
        below = next(n for n in range(top, len(lines)) if "Hi." in lines[n])
        header_lines = lines[top:below]
        assert len(header_lines) > 1  # the text is below every line of the header
        assert "◆" in header_lines[0] and "".join(header_lines).count("m") == 80


async def test_stopped_and_interrupted_replies_are_marked() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        for stop_reason, error, label in (
            ("aborted", None, "■ stopped"),
            ("interrupted", None, "interrupted (connection lost)"),
            ("interrupted", STOPPED, f"interrupted ({STOPPED})"),
        ):
            reply = app.chat.start_reply("demo")
            reply.feed(TextDelta(f"text {stop_reason}"))
            await wait_rendered(pilot, reply)
            saved = assistant(f"text {stop_reason}", stop_reason=stop_reason, error=error)
            await reply.finish(make(saved))
            await pilot.pause()
            assert label in screen_text(app)


async def test_typing_stays_possible_while_a_long_reply_streams() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = app.chat.start_reply("demo")
        app.query_one(Input).focus()
        tokens = reply_tokens(4_000)

        async def produce() -> None:
            for token in tokens:
                reply.feed(TextDelta(token))
                await asyncio.sleep(0)

        producer = asyncio.create_task(produce())
        await pilot.press(*"hello")
        assert app.query_one(Input).value == "hello"
        await producer
        await reply.finish(EntryMaker()(assistant("".join(tokens))))
        assert reply.source == "".join(tokens)


async def test_code_fences_keep_their_content_after_a_restyle() -> None:
    """Textual issue 6518: streamed fences lost their code when recomposed."""
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = app.chat.start_reply("demo")
        text = "Example:\n\n```python\nprint('first')\nprint('second')\n```\n\nDone.\n"
        for piece in chunks(text, 3):
            reply.feed(TextDelta(piece))
            await wait_rendered(pilot, reply)
        fence = reply.query_one(MarkdownFence)
        assert "print('second')" in str(fence._highlighted_code)
        await fence.recompose()
        app.theme = "textual-light"
        await pilot.pause()
        assert "print('second')" in screen_text(app)


@pytest.mark.patched
async def test_full_collections_wait_while_a_reply_streams() -> None:
    """Full garbage collections pause longer as a reply grows: they are deferred while it streams."""
    import gc

    assert gc.isenabled()
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        reply = app.chat.start_reply("demo")
        await pilot.pause()
        assert not gc.isenabled()
        reply.feed(TextDelta("text"))
        await wait_rendered(pilot, reply)
        await reply.finish(make(assistant("text")))
        # The deferred full collection waits for the frame showing the last words.
        assert not gc.isenabled()
        for _ in range(200):
            await pilot.pause(0.02)
            if gc.isenabled():
                break
        assert gc.isenabled()
        # A reply dropped without being finished (another branch shown) restores them too.
        app.chat.start_reply("demo")
        await pilot.pause()
        assert not gc.isenabled()
        await app.chat.set_entries([make(user("elsewhere"))])
        await pilot.pause()
        assert gc.isenabled()


async def test_finish_right_after_start_shows_the_entry() -> None:
    app = ChatTestApp()
    async with app.run_test(size=(100, 30)) as pilot:
        make = EntryMaker()
        reply = app.chat.start_reply("demo")
        reply.feed(TextDelta("never rendered"))
        await reply.finish(make(assistant("saved at once", stop_reason="aborted")))
        await pilot.pause()
        await pilot.pause()
        assert reply.source == "saved at once"
        assert app.chat.message_widgets == [reply] and app.chat.reply is None
        assert "■ stopped" in screen_text(app)


class HeadingsHeard(ChatTestApp):
    """Counts the headings updates of Markdown widgets that reach the app."""

    def __init__(self) -> None:
        super().__init__()
        self.headings_heard = 0

    def on_markdown_table_of_contents_updated(self) -> None:
        self.headings_heard += 1


async def test_a_plain_reply_is_its_text_under_a_header_it_paints_and_no_more() -> None:
    """No header line, countdown or status line is made for a reply that needs
    none, and a segment's headings are nobody else's business (four hops at
    each update)."""
    app = HeadingsHeard()
    async with app.run_test(size=(100, 30)) as pilot:
        reply = await streamed_and_finished(pilot, app, ["# Plain\n\nanswer"], piece_chars=5)
        assert [type(child).__name__ for child in reply.children] == ["SegmentedMarkdown"]
        assert not app.chat.query(".message-header, .message-waiting, .message-status")
        assert "Plain" in screen_text(app) and app.headings_heard == 0
        make = EntryMaker()
        make.count = 100  # not the streamed reply's id
        await app.chat.set_entries([make(assistant("# Saved\n\nanswer", model="the-model"))])
        await settle(pilot, app)
        [saved] = app.chat.message_widgets
        assert [type(child).__name__ for child in saved.children] == ["SegmentedMarkdown"]
        assert "Saved" in screen_text(app) and app.headings_heard == 0
        # The header is the row's first line, the text (a heading, its margin
        # above it) right below it.
        lines = screen_text(app).splitlines()
        top = saved.content_region.y
        assert "◆ the-model" in lines[top] and saved.text_parts[0].region.y == top + 1
        assert "Saved" in "".join(lines[top + 1 : top + 4])
