"""Keys first while a reply streams: a key holds stream readers until its widget
has handled it and renderers until it is painted, and a reply's blocks never
hold every screen update (``App.batch_update``) while they mount."""

from __future__ import annotations

import asyncio
from contextlib import contextmanager

import pytest
from textual import events
from textual.app import App
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from tests.fake_provider import FakeProvider, Reply
from tests.tui.helpers import running, send, settle, wait_for
from tui.internals.keys_first import UiFirst, ui_first
from tui.widgets.prompt_input import PromptInput
from tui.widgets.segmented_markdown import MarkdownSegment, _drop_blocks_from


@pytest.fixture(autouse=True)
def keys_held_until_reported(monkeypatch) -> None:
    """A key holds streams and renders until it is reported handled and painted:
    the hold's time limit (a report that never comes) is out of reach here, so a
    missing report cannot pass."""
    monkeypatch.setattr(ui_first, "hold_seconds", 30.0)


PARAGRAPHS = "\n\n".join(f"Paragraph {n} with some words in it." for n in range(40))


async def test_a_key_read_holds_readers_until_handled_and_renderers_until_painted() -> None:
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


async def test_streamed_text_waits_until_a_key_on_its_way_is_painted() -> None:
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


async def test_a_key_s_own_handler_mounts_finished_text_without_waiting_for_its_paint() -> None:
    """A key that switches branches mounts the new path's messages in its handler:
    their blocks must not wait for that key to be painted (it cannot be before)."""
    app = Segments()
    async with app.run_test():
        with key_on_its_way():
            segment = MarkdownSegment(PARAGRAPHS)
            await asyncio.wait_for(app.screen.mount(segment), 10)
            assert len(segment.children) == 40


@contextmanager
def key_on_its_way():
    """A key read, handled and painted when the block ends."""
    ui_first.key_read()
    try:
        yield
    finally:
        ui_first.key_handled()
        ui_first.key_painted()


async def append_racing(pilot, app: App, first: str, last: str, then) -> MarkdownSegment:
    """A live segment streams ``first`` (its blocks made), then ``last`` while a
    key is on its way (that append waits for the paint); the stream is stopped,
    ``then(segment)`` starts, the key is painted, and ``then`` is awaited."""
    live = MarkdownSegment(streaming=True)
    await app.screen.mount(live)
    stream = Markdown.get_stream(live)
    if first:
        await stream.write(first)
        await pilot.pause()
    with key_on_its_way():
        await stream.write(last)
        await stream.stop()  # its last append goes on, shielded
        racing = asyncio.ensure_future(then(live))
        await pilot.pause()
    await asyncio.wait_for(racing, 10)
    await pilot.pause()
    return live


def shown(segment: MarkdownSegment) -> str:
    return " ".join(str(block._content) for block in segment.query(MarkdownBlock))


async def test_a_reply_finished_while_its_last_append_waits_shows_the_text_once() -> None:
    """The update with the whole text must come after the append, not before it."""
    app = Segments()
    async with app.run_test() as pilot:
        live = await append_racing(
            pilot,
            app,
            "Hello there.",
            " More words.",
            lambda s: s.update("Hello there. More words."),
        )
        assert shown(live) == "Hello there. More words."
        assert live.source == "Hello there. More words."


async def test_a_segment_cut_while_its_last_append_waits_keeps_only_its_part() -> None:
    """The blocks of the text carried to the next segment are dropped after that append."""
    app = Segments()
    async with app.run_test() as pilot:
        live = await append_racing(
            pilot,
            app,
            "First paragraph.\n\nCarried",
            " on.",
            lambda s: _drop_blocks_from(s, "First paragraph.\n\n"),
        )
        assert shown(live) == "First paragraph." and live.source == "First paragraph.\n\n"


async def test_a_reply_finished_before_its_first_append_made_blocks_shows_the_text_once() -> None:
    """The update finds no blocks when called, and the append's when it runs:
    they are replaced, not kept."""
    app = Segments()
    async with app.run_test() as pilot:
        live = await append_racing(
            pilot, app, "", "Beans and peas.", lambda s: s.update("Beans and peas, then radishes.")
        )
        assert shown(live) == "Beans and peas, then radishes."


async def test_a_typed_key_is_painted_as_soon_as_its_widget_has_handled_it(monkeypatch) -> None:
    """Its echo does not wait for the screen's next update (and a layout pass
    due for a streaming reply that the update would do first)."""
    import tui.modes.app

    painted: list[tuple[object, str, bool]] = []
    paint_now = tui.modes.app.paint_now

    def recorded(widget) -> bool:
        done = paint_now(widget)
        painted.append((widget, getattr(widget, "text", ""), done))
        return done

    monkeypatch.setattr(tui.modes.app, "paint_now", recorded)
    async with running() as pilot:
        prompt = pilot.app.screen.query_one(PromptInput)
        pilot.app.post_message(events.Key("x", "x"))
        await asyncio.wait_for(ui_first.render_turn(), 10)
        assert painted == [(prompt, "x", True)]
        assert not ui_first.held


@pytest.mark.patched
async def test_a_screen_update_waits_until_a_key_read_is_handled(monkeypatch) -> None:
    """A layout pass due for other widgets (a streaming reply's, 10-15 ms)
    does not come between a key read and its handler: the key's echo, painted
    once it is handled, would wait for it."""
    asked: list[bool] = []
    waiting = UiFirst.key_waiting.fget

    def counted(self: UiFirst) -> bool:
        asked.append(waiting(self))
        return asked[-1]

    monkeypatch.setattr(UiFirst, "key_waiting", property(counted))
    async with running() as pilot:
        screen = pilot.app.screen
        with key_on_its_way():
            new = Static("laid out after the key")
            await screen.mount(new)
            await wait_for(lambda: asked.count(True) >= 3, pilot)  # three updates waited
            assert new.size.height == 0  # not laid out yet
        await wait_for(lambda: new.size.height > 0, pilot)


async def test_a_key_no_widget_handles_is_read_once() -> None:
    """A key its widget does not handle bubbles up to the app again: it is the
    same key, not a new one read, and nothing waits for it once it is handled."""
    async with running() as pilot:
        pilot.app.post_message(events.Key("f19", None))  # as the terminal driver posts it
        await settle(pilot)
        assert not ui_first.held


async def test_the_apps_replies_are_read_keys_first(monkeypatch) -> None:
    """The app gives its conversations the keys-first pace: a reply's stream
    reader waits at each slice's end until the keys read are handled."""
    import core.providers.pacing as pacing

    monkeypatch.setattr(pacing, "SLICE_SECONDS", 0)  # every chunk ends a slice
    turns: list[bool] = []
    reader_turn = ui_first.reader_turn

    async def counted() -> None:
        turns.append(True)
        await reader_turn()

    monkeypatch.setattr(ui_first, "reader_turn", counted)
    with FakeProvider() as server:
        server.script(Reply(text=PARAGRAPHS))
        argv = ["--model", "openai/qwen3", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await send(pilot, "hello")
            reply = pilot.app.conversation.session.path[-1].message
            assert reply is not None and reply.text == PARAGRAPHS
    assert turns
