"""Keys first while a reply streams: a key holds stream readers until its widget
has handled it and renderers until it is painted, and a reply's blocks never
hold every screen update (``App.batch_update``) while they mount."""

from __future__ import annotations

import asyncio
from contextlib import contextmanager

from textual import events
from textual.app import App
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from core.providers.pacing import ui_first
from tests.tui.helpers import running
from tui.widgets.prompt_input import PromptInput
from tui.widgets.segmented_markdown import MarkdownSegment, _drop_blocks_from

PARAGRAPHS = "\n\n".join(f"Paragraph {n} with some words in it." for n in range(40))


async def test_a_key_read_holds_readers_until_handled_and_renderers_until_painted(
    monkeypatch,
) -> None:
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)  # a missing report cannot pass
    async with running() as pilot:
        prompt = pilot.app.screen.query_one(PromptInput)
        seen: list[tuple[str, str]] = []

        async def reader() -> None:
            await ui_first.reader_turn()
            seen.append(("reader", prompt.text))

        async def renderer() -> None:
            await ui_first.render_turn()
            seen.append(("renderer", prompt.text))

        pilot.app.post_message(events.Key("x", "x"))  # as the terminal driver posts it
        assert ui_first.held
        waiting = [asyncio.create_task(reader()), asyncio.create_task(renderer())]
        await asyncio.wait_for(asyncio.gather(*waiting), 10)
        assert seen == [("reader", "x"), ("renderer", "x")]
        assert not ui_first.held


class Segments(App):
    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    @contextmanager
    def batch_update(self):
        self.batches += 1
        with super().batch_update():
            yield


async def test_streamed_and_whole_segments_mount_their_blocks_outside_a_batch() -> None:
    app = Segments()
    async with app.run_test() as pilot:
        app.batches = 0  # the app's start composes its screen in one
        live = MarkdownSegment(streaming=True)
        whole = MarkdownSegment(PARAGRAPHS)
        await app.screen.mount_all([live, whole])
        for start in range(0, len(PARAGRAPHS), 50):
            await live.append(PARAGRAPHS[start : start + 50])
        await pilot.pause()
        assert live.source == whole.source == PARAGRAPHS
        assert len(live.children) == len(whole.children) == 40
        assert app.batches == 0


async def test_streamed_text_waits_until_a_key_on_its_way_is_painted(monkeypatch) -> None:
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)
    app = Segments()
    async with app.run_test() as pilot:
        live = MarkdownSegment(streaming=True)
        await app.screen.mount(live)
        ui_first.key_read()
        appended = live.append("Hello **there**")
        await pilot.pause()
        assert not live.children and not appended.is_done  # no blocks made yet
        ui_first.key_handled()
        await pilot.pause()
        assert not appended.is_done  # handled is not painted
        ui_first.key_painted()
        await asyncio.wait_for(appended(), 10)
        assert live.source == "Hello **there**" and len(live.children) == 1


async def test_a_key_s_own_handler_mounts_finished_text_without_waiting_for_its_paint(
    monkeypatch,
) -> None:
    """A key that switches branches mounts the new path's messages in its handler:
    their blocks must not wait for that key to be painted (it cannot be before)."""
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)
    app = Segments()
    async with app.run_test():
        ui_first.key_read()
        try:
            segment = MarkdownSegment(PARAGRAPHS)
            await asyncio.wait_for(app.screen.mount(segment), 10)
            assert len(segment.children) == 40
        finally:
            ui_first.key_handled()
            ui_first.key_painted()


async def test_a_stream_stopped_while_its_append_waits_for_a_key_shows_the_text_once(
    monkeypatch,
) -> None:
    """A reply finishing while its last append waits for a key's paint: the
    stream is stopped (its append goes on, shielded) and the segment updated
    with the whole text. The update must come after the append, not before
    it (the text would then show twice)."""
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)
    app = Segments()
    async with app.run_test() as pilot:
        live = MarkdownSegment(streaming=True)
        await app.screen.mount(live)
        stream = Markdown.get_stream(live)
        await stream.write("Hello there.")
        await pilot.pause()
        ui_first.key_read()
        try:
            await stream.write(" More words.")
            await stream.stop()
            updating = asyncio.ensure_future(live.update("Hello there. More words."))
            await pilot.pause()
        finally:
            ui_first.key_handled()
            ui_first.key_painted()
        await asyncio.wait_for(updating, 10)
        await pilot.pause()
        shown = " ".join(str(block._content) for block in live.query(MarkdownBlock))
        assert shown.count("More words.") == 1 and shown.count("Hello there.") == 1
        assert live.source == "Hello there. More words."


async def test_a_segment_frozen_while_its_last_append_waits_keeps_only_its_part(
    monkeypatch,
) -> None:
    """The live segment is cut (its stream stopped, the blocks of the text carried
    to the next segment dropped) while its last append waits for a key's paint:
    the drop comes after that append, so the carried text is not left behind."""
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)
    app = Segments()
    async with app.run_test() as pilot:
        live = MarkdownSegment(streaming=True)
        await app.screen.mount(live)
        stream = Markdown.get_stream(live)
        await stream.write("First paragraph.\n\nCarried")
        await pilot.pause()
        ui_first.key_read()
        try:
            await stream.write(" on.")
            await stream.stop()
            dropping = asyncio.ensure_future(_drop_blocks_from(live, "First paragraph.\n\n"))
            await pilot.pause()
        finally:
            ui_first.key_handled()
            ui_first.key_painted()
        await asyncio.wait_for(dropping, 10)
        await pilot.pause()
        shown = " ".join(str(block._content) for block in live.query(MarkdownBlock))
        assert shown == "First paragraph." and live.source == "First paragraph.\n\n"


async def test_a_live_segment_finished_before_its_first_append_made_blocks_shows_the_text_once(
    monkeypatch,
) -> None:
    """The whole text arrives (an update) while the stream's first append, which
    the update queues behind, has not made its blocks yet: the update finds no
    blocks when called, and blocks when it runs. They are replaced, not kept."""
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)
    app = Segments()
    async with app.run_test() as pilot:
        live = MarkdownSegment(streaming=True)
        await app.screen.mount(live)
        stream = Markdown.get_stream(live)
        ui_first.key_read()
        try:
            await stream.write("Beans and peas.")
            await stream.stop()
            updating = asyncio.ensure_future(live.update("Beans and peas, then radishes."))
            await pilot.pause()
        finally:
            ui_first.key_handled()
            ui_first.key_painted()
        await asyncio.wait_for(updating, 10)
        await pilot.pause()
        shown = " ".join(str(block._content) for block in live.query(MarkdownBlock))
        assert shown == "Beans and peas, then radishes."
