"""The assistant reply being streamed at the bottom of the chat."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable, Iterable

from textual.app import ComposeResult
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker

from core.chat.results import ToolActivity
from core.providers.base import (
    Done,
    ErrorEvent,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)
from core.sanitize import StreamCleaner
from core.sessions.content import ImageContent, TextContent, ThinkingContent, ToolCallContent
from core.sessions.entries import Entry
from core.sessions.messages import Usage
from tui.internals import gc_policy as _gc
from tui.internals.keys_first import ui_first
from tui.internals.textual_private import lay_out_now
from tui.widgets._context import ViewContext
from tui.widgets._text import one_line
from tui.widgets.assistant_message import (
    AssistantMessage,
    content_runs,
    header_content,
    hint_for,
    lone_paragraph_of,
    usage_label,
)
from tui.widgets.segmented_markdown import SegmentedMarkdown, paragraph_to_paint
from tui.widgets.thinking_block import ThinkingBlock
from tui.widgets.tool_call_card import ToolCallCard

FRAME_SECONDS = 1 / 30
"""At most one render of new stream events per frame while the screen keeps up,
until the stream is all in (its ``Done`` fed, or the reply saved): what is
left then is rendered at once, as nothing more comes to batch with it."""
RENDER_REST = 1.0
"""After a render that left text queued (the stream is ahead of the screen),
the loop is left to keys and the stream's reader for this many times as long
as the render and its paint took: renders take at most half of it. Not once
the stream is all in (its ``Done`` is queued): no reader needs the loop then,
and a key read meanwhile is painted before the next render anyway."""
REST_AT_MOST = 0.25
"""The longest rest (a paint can be slow for reasons that are not the render's)."""
FIRST_FRAME_CHARS = 1_000
"""At most this much text in the first render, so that the first words are
painted at once. Later renders take everything queued: a reply far ahead of
the screen mounts what scrolls out of view lazily (``SegmentedMarkdown.write``),
so a render's work stays bounded (keys echo) however much text it takes."""
SHOWN_WITHIN = 10.0
"""How long :meth:`ReplyView.wait_shown` waits for a reply's mount."""


_KINDS: tuple[tuple[type, str], ...] = (
    (TextContent, "text"),
    (SegmentedMarkdown, "text"),
    (ThinkingContent, "thinking"),
    (ThinkingBlock, "thinking"),
    (ToolCallContent, "tool"),
    (ToolCallCard, "tool"),
    (ImageContent, "image"),
)


def _kind(item: object) -> str:
    """What a block, or the widget showing one, is: text, thinking, tool or image."""
    return next(
        (kind for cls, kind in _KINDS if isinstance(item, cls)),
        "image" if isinstance(item, Widget) else "other",
    )


class ReplyView(AssistantMessage):
    """A live assistant message.

    :meth:`feed` only queues events; a render loop applies everything queued at
    most once per frame (text through segmented ``Markdown.get_stream``), so
    feeding is cheap however fast tokens arrive. :meth:`finish` shows the saved
    message: one update of the full text per segment, and how the reply ended.
    """

    COMPONENT_CLASSES = {"message-header--streaming"}

    DEFAULT_CSS = """
    ReplyView > .message-header--streaming {
        color: $text-accent;
    }
    """

    def __init__(
        self,
        model: str,
        context: ViewContext | None = None,
        *,
        agent: str | None = None,
        on_finished: Callable[[ReplyView, Entry], None] | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """
        Args:
            model: The model answering (shown in the header).
            agent: The round-table agent answering (named in the header), if any.
            on_finished: Called (by the chat view) once the saved entry is shown.
        """
        super().__init__(None, context, id=id, classes=classes)
        self._streaming = True
        """Until the saved entry is shown: the header is in the accent colour."""
        self.model = model
        self.agent = agent
        self._on_finished = on_finished
        self._pending: list[StreamEvent | ToolActivity] = []
        self._applying = False  # a frame taken from ``_pending`` is being rendered
        self._readers_held = contextlib.ExitStack()
        """Stream readers' wait (:meth:`UiFirst.rendering`) from the first event
        fed until the first render is made and painted (at most
        ``keys_first.HOLD_SECONDS``)."""
        self._wake = asyncio.Event()
        self._stream_ended = False
        self._stream_in = False
        """The stream's end (``Done``) has been fed: nothing more is read for it."""
        self._all_in = asyncio.Event()
        """Set with ``_stream_in`` or by :meth:`finish`: a frame's wait ends."""
        self._finished = False
        self._worker: Worker[None] | None = None
        self._parts: list[tuple[str, Widget]] = []
        self._cards_by_index: dict[int, ToolCallCard] = {}
        self._cards_by_call: dict[str, ToolCallCard] = {}
        """The cards the agent loop's activities were shown in, by call id."""
        self._usage: Usage | None = None
        self._cleaner = StreamCleaner()
        self._text_hold = ""
        self._broken = False
        self._gc_deferred = False
        self._mount_started = False
        self._shown = asyncio.Event()
        """Set once the saved entry is shown (or the reply was removed unshown)."""
        self._wait_deadline: float | None = None
        self._wait_reason = ""
        self._wait_timer: Timer | None = None
        self._silence: str | None = None
        """How long the server has sent nothing, while it is silent."""
        self._waiting: Static | None = None
        """The retry countdown or the wait in seconds, made the first time there is one."""
        self.renders = 0
        """How many times queued events were rendered (for benchmarks)."""
        self.rendered_chars = 0
        """How many characters of reply text have been rendered (for benchmarks)."""
        self.first_render_chars = 0
        """How many characters the first render took (for tests)."""

    def compose(self) -> ComposeResult:
        self._header_shown = self._header_text()
        return ()  # the parts come with the events

    async def on_mount(self) -> None:
        await super().on_mount()
        self._mount_started = True
        if self._finished:
            # Finished before it was mounted (the view was still moving to the end).
            await self._show_entry()
            return
        _gc.defer_full_collections()
        self._gc_deferred = True
        self._worker = self.run_worker(
            self._render_loop(), group="reply-render", exit_on_error=False
        )
        self._update_waiting()

    def on_unmount(self) -> None:
        self._readers_held.close()
        self._restore_collections()

    def _restore_collections(self) -> None:
        if self._gc_deferred:
            self._gc_deferred = False
            _gc.restore_collections()

    # --- the public interface ------------------------------------------------

    @property
    def is_finished(self) -> bool:
        """Has :meth:`finish` shown the saved entry?"""
        return self._finished

    @property
    def caught_up(self) -> bool:
        """Is everything fed so far rendered (none queued, none mid-render)?"""
        return not self._pending and not self._applying

    def feed(self, event: StreamEvent) -> None:
        """Queue a stream event; it is shown at the next frame."""
        if self._finished or self._stream_ended:
            return
        if not self.renders and not self._pending:
            # Held until the first render is painted: the row's mount and that
            # render do not wait for a reader's slice of the interpreter at each hop.
            self._readers_held.enter_context(ui_first.rendering())
        self._pending.append(event)
        if isinstance(event, Done):
            self._stream_in = True
            self._all_in.set()
        self._wake.set()

    def show_tool(self, activity: ToolActivity) -> None:
        """Queue a new state of one of this reply's tool calls: it is shown at
        the next frame, after the stream events queued before it."""
        if self._finished:
            return
        self._pending.append(activity)
        self._wake.set()

    def tick_tools(self) -> None:
        """Update the time of running tool cards."""
        for card in self._cards_by_index.values():
            card.tick()

    def show_waiting(self, seconds: float, reason: str) -> None:
        """Show a retry countdown: ``⟳ reason — retrying in N s``."""
        self._wait_deadline = time.monotonic() + max(0.0, seconds)
        self._wait_reason = one_line(reason, 200)
        if self.is_mounted:
            self._update_waiting()

    def show_silence(self, text: str) -> None:
        """Show how long nothing has come: ``⋯ waiting for the first token · 42 s``
        (until the next event is rendered)."""
        self._silence = one_line(text, 200)
        if self.is_mounted:
            self._update_waiting()

    async def finish(self, entry: Entry) -> None:
        """Show the saved assistant message and how it ended (stopped, interrupted, error)."""
        if self._finished:
            return
        self._stream_ended = True
        self._all_in.set()
        self._wake.set()
        self._finished = True
        self.entry = entry
        self._wait_deadline = None
        self._silence = None
        if not self.is_attached:
            self._restore_collections()
            self._shown.set()
            return  # removed (another path is shown): nothing to update
        if not self._mount_started:
            return  # being mounted: on_mount shows the entry
        worker = self._worker
        if worker is not None and not worker.is_finished:
            try:
                await worker.wait()
            except Exception:  # cancelled or failed: the entry below is the truth anyway
                self._broken = True
        await self._show_entry()

    async def _show_entry(self) -> None:
        message = self.message
        if message is not None:
            await self._reconcile(list(content_runs(message.content)))
        self._streaming = False  # (no bar of alternatives before: it needs the entry)
        # After the frame showing the last words: the full collection deferred
        # while streaming (a pause that grows with the reply) comes after them.
        self.call_after_refresh(self._restore_collections)
        self.refresh()
        self._update_waiting()
        self._show_header()
        self._show_status()
        if self._on_finished is not None and self.entry is not None:
            self._on_finished(self, self.entry)
        self._shown.set()

    async def wait_shown(self, timeout: float = SHOWN_WITHIN) -> None:
        """After :meth:`finish`: until the saved entry is shown, which waits for
        the mount when the reply was finished before it was mounted (results
        saved after it then find its cards). A reply removed before it was ever
        mounted is never shown: ``timeout`` bounds that wait."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._shown.wait(), timeout)

    # --- rendering -------------------------------------------------------------

    async def _render_loop(self) -> None:
        try:
            await self._render_events()
        finally:
            self._readers_held.close()

    async def _render_events(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            # The first words go out at once: beside a key's frame (Enter's own),
            # their mounts not waiting on the reader. Later a key is painted first.
            first = not self.renders
            if not first:
                await ui_first.render_turn()
            started = time.perf_counter()
            if self._pending:
                events = self._take_frame()
                self._applying = True
                try:
                    await self._apply(events)
                except Exception as error:  # never lose the reply to a rendering bug
                    self._broken = True
                    self.log.error("reply rendering failed", error)
                finally:
                    self._applying = False
                if first:
                    self._paint_first_words()
                self._readers_held.close()
                self.renders += 1
                _gc.collect_young()
            if self._stream_ended and not self._pending:
                return
            if self._pending:
                # Behind the stream: paint this frame, then rest as long as the
                # render and its paint took, so that keys and the stream's
                # reader find the loop free (once it is all in: no rest).
                self._wake.set()
                await self._painted()
                await asyncio.sleep(self._rest_after(time.perf_counter() - started))
            else:
                await self._next_frame()

    async def _next_frame(self) -> None:
        """Until the next frame, or until the stream is all in (see :data:`FRAME_SECONDS`)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._all_in.wait(), FRAME_SECONDS)

    def _paint_first_words(self) -> None:
        """Lay out and paint the first render now, with the readers still held.
        At the update timer's next tick it could be a frame or more later: the
        row's layout request reaches the screen through a message queue, and a
        tick that comes first paints nothing new. A short reply all in by then
        is painted before it is saved (the finish lays out again)."""
        if self.is_attached:  # not removed while it rendered (a branch switched)
            lay_out_now(self)

    def _rest_after(self, took: float) -> float:
        """The pause after a render (and its paint) that took ``took`` seconds
        and left text queued: see :data:`RENDER_REST`."""
        return 0.0 if self._stream_in else min(REST_AT_MOST, RENDER_REST * took)

    async def _painted(self) -> None:
        """Until the screen has been refreshed (at once if it cannot be)."""
        painted = asyncio.Event()
        if self.call_after_refresh(painted.set):
            await painted.wait()

    def _take_frame(self) -> list[StreamEvent | ToolActivity]:
        """The queued events for one render: everything, except in the first
        render, which takes text to the end of the first paragraph, or up to
        :data:`FIRST_FRAME_CHARS` (a delta that crosses either is split), and
        leaves the rest queued: one paragraph is painted by the reply's row
        itself, with no child to mount first."""
        if self.renders:
            taken, self._pending = self._pending, []
            return taken
        budget = FIRST_FRAME_CHARS
        written = ""
        for index, event in enumerate(self._pending):
            if not isinstance(event, TextDelta):
                continue
            end = _paragraph_end(written, event.text)
            cut = budget if end is None else min(budget, end)
            if len(event.text) > cut:
                taken = self._pending[:index]
                if cut:
                    taken.append(TextDelta(event.text[:cut]))
                self._pending = [TextDelta(event.text[cut:]), *self._pending[index + 1 :]]
                return taken
            budget -= len(event.text)
            written += event.text
        taken, self._pending = self._pending, []
        return taken

    async def _apply(self, events: list[StreamEvent | ToolActivity]) -> None:
        """Render a batch of events: consecutive deltas of one kind are joined first."""
        content_arrived = False
        for kind, batch in _batches(events):
            if kind == "text":
                text = "".join(event.text for event in batch)  # type: ignore[union-attr]
                content_arrived = True
                await self._write_text(text)
            elif kind == "thinking":
                content_arrived = True
                await self._write_thinking(batch)  # type: ignore[arg-type]
            elif kind == "tool":
                content_arrived = True
                for event in batch:
                    await self._write_tool(event)  # type: ignore[arg-type]
            elif kind == "usage":
                self._usage = batch[-1].usage  # type: ignore[union-attr]
                self._show_header()
            elif kind == "error":
                self._show_live_error(batch[-1])  # type: ignore[arg-type]
            elif kind == "activity":
                for activity in batch:
                    await self._write_activity(activity)  # type: ignore[arg-type]
        if self._silence is not None:  # something came: the wait is over
            self._silence = None
            self._update_waiting()
        if content_arrived and self._wait_deadline is not None:
            self._wait_deadline = None
            self._update_waiting()

    async def _write_text(self, text: str) -> None:
        text = self._cleaner.feed(text)
        if not text:
            return
        part = self._parts[-1][1] if self._parts and self._parts[-1][0] == "text" else None
        if part is None and self._text is None:
            # Leading whitespace alone does not start a text part.
            if not (self._text_hold + text).strip():
                self._text_hold += text
                return
            text, self._text_hold = self._text_hold + text, ""
        if part is None and not self._parts and not self.children:
            # The reply's only part so far: painted by the row while it is one paragraph.
            whole = (self._text or "") + text
            paragraph = paragraph_to_paint(whole)
            if paragraph is not None:
                self._paint_text(whole, paragraph)
                self._count_rendered(text)
                return
        if part is None:
            if self._text is not None:
                await self._text_part_made()  # from the painted paragraph, then the rest
            else:
                await self._add_part("text", SegmentedMarkdown(live=True))
            part = self._parts[-1][1]
        assert isinstance(part, SegmentedMarkdown)
        segments = len(part.segments)
        await part.write(text)
        self._count_rendered(text)
        if len(part.segments) != segments:
            self._refresh_visibility()

    def _count_rendered(self, text: str) -> None:
        if not self.rendered_chars:
            self.first_render_chars = len(text)
        self.rendered_chars += len(text)

    async def _text_part_made(self) -> None:
        """The painted paragraph made the reply's text part, mounted (if it was painted)."""
        mounting = self._make_text_part()
        if mounting is not None:
            await mounting

    def _text_part(self, text: str) -> SegmentedMarkdown:
        part = SegmentedMarkdown(text, live=not self._finished)
        self._parts.insert(0, ("text", part))
        return part

    async def _write_thinking(self, batch: list[ThinkingDelta]) -> None:
        for event in batch:
            part = self._parts[-1][1] if self._parts and self._parts[-1][0] == "thinking" else None
            if event.redacted:
                await self._add_part("thinking", ThinkingBlock(redacted=True, live=True))
                continue
            if part is None or event.new_block or getattr(part, "redacted", False):
                if not event.text and part is None and event.signature:
                    continue
                part = ThinkingBlock(live=True)
                await self._add_part("thinking", part)
            assert isinstance(part, ThinkingBlock)
            part.append(event.text)

    async def _write_tool(self, event: ToolCallDelta) -> None:
        card = self._cards_by_index.get(event.index)
        if card is None:
            card = ToolCallCard(None, None, self.context, live=True)
            self._cards_by_index[event.index] = card
            await self._add_part("tool", card)
        card.append_call(call_id=event.id, name=event.name, arguments=event.arguments)

    async def _write_activity(self, activity: ToolActivity) -> None:
        """Show a call's state in its card: the streamed card with its id, else
        the first streamed card not yet given a call (ids may be rewritten),
        else a new card."""
        call_id = activity.call.id
        card = self._cards_by_call.get(call_id)
        if card is None:
            cards = list(self._cards_by_index.values())
            bound = set(self._cards_by_call.values())
            card = next((c for c in cards if c.call_id == call_id and c not in bound), None)
            card = card or next((c for c in cards if c not in bound), None)
            if card is None:
                card = ToolCallCard(activity.call, None, self.context)
                self._cards_by_index[max(self._cards_by_index, default=-1) + 1] = card
                await self._add_part("tool", card)
            self._cards_by_call[call_id] = card
        card.show_activity(activity)

    async def _add_part(self, kind: str, widget: Widget) -> None:
        await self._text_part_made()
        self._parts.append((kind, widget))
        await self.mount(widget, before=self._below_parts())

    def _below_parts(self) -> Widget | None:
        """The first line shown below the parts (the countdown, the status), if any."""
        return self._waiting or self._status

    def _show_live_error(self, event: ErrorEvent) -> None:
        error = one_line(getattr(event.error, "message", str(event.error)), 300) or "unknown error"
        hint = hint_for(getattr(event.error, "kind", None), self.context.retry_hint)
        self._set_status(f"✗ error: {error} · {hint}", "-error")

    def _refresh_visibility(self) -> None:
        height = self.screen.size.height if self.is_attached else 0
        if height:
            self.update_visibility(-height, 2 * height)

    def _header_style(self) -> tuple[str, ...]:
        if self._streaming:
            return ("message-header", "message-header--streaming")
        return super()._header_style()

    def _header_text(self) -> Content:
        if self.message is not None:
            return super()._header_text()
        usage = usage_label(self._usage)
        return header_content(
            self.model, f" · {usage}" if usage else " · …", self.agent, self.context
        )

    def _update_waiting(self) -> None:
        """The countdown to a retry while it runs, else the wait in seconds, else nothing."""
        deadline = self._wait_deadline
        remaining = math.ceil(deadline - time.monotonic()) if deadline is not None else 0
        if deadline is not None and (remaining > 0 or self._silence is None):
            if self._wait_timer is None:
                self._wait_timer = self.set_interval(0.25, self._update_waiting)
            when = f"retrying in {remaining} s" if remaining > 0 else "retrying…"
            reason = f"{self._wait_reason} — " if self._wait_reason else ""
            line = f"⟳ {reason}{when}"
        else:
            if self._wait_timer is not None:
                self._wait_timer.stop()
                self._wait_timer = None
            if self._silence is None:
                if self._waiting is not None:
                    self._waiting.display = False
                return
            line = f"⋯ {self._silence}"
        waiting = self._waiting
        if waiting is None:
            self._make_text_part()
            waiting = self._waiting = Static(markup=False, classes="message-waiting")
            self.mount(waiting, before=self._status)
        waiting.update(Content(line))
        waiting.display = True

    # --- finishing ---------------------------------------------------------------

    async def _reconcile(self, blocks: list[object]) -> None:
        """Make the streamed parts show the saved blocks (or rebuild them from the blocks)."""
        blocks = [b for b in blocks if not (isinstance(b, TextContent) and not b.text.strip())]
        if self._text is not None:
            lone = None if self._broken else lone_paragraph_of(blocks)
            if lone is not None:
                self._paint_text(*lone)
                return
            await self._text_part_made()  # the saved text is more: the part shows it
        kinds = [_kind(block) for block in blocks]
        if not self._broken and kinds == [kind for kind, _ in self._parts]:
            for block, (_, widget) in zip(blocks, self._parts, strict=False):
                if isinstance(block, TextContent) and isinstance(widget, SegmentedMarkdown):
                    await widget.finish(block.text)
                elif isinstance(block, ThinkingContent) and isinstance(widget, ThinkingBlock):
                    widget.finish(block.text, block.redacted)
                elif isinstance(block, ToolCallContent) and isinstance(widget, ToolCallCard):
                    widget.finish_call(block)
                    self._cards[block.id] = widget
                    if block.id in self._results:
                        await widget.set_result(
                            self._results[block.id], self._outcomes.get(block.id)
                        )
            return
        # What was streamed does not match what was saved: show what was saved.
        old = [widget for _, widget in self._parts]
        self._parts = []
        self._cards.clear()
        message = self.message
        new = list(self._build_parts(message)) if message is not None else []
        with self.app.batch_update():
            if old:
                await self.remove_children(old)
            if new:
                await self.mount_all(new, before=self._below_parts())
        self._parts = [(_kind(widget), widget) for widget in new]


def _batches(
    events: Iterable[StreamEvent | ToolActivity],
) -> list[tuple[str, list[StreamEvent | ToolActivity]]]:
    """Consecutive events grouped by kind (thinking: a new block starts a new group)."""
    batches: list[tuple[str, list[StreamEvent | ToolActivity]]] = []
    for event in events:
        if isinstance(event, ToolActivity):
            kind = "activity"
        elif isinstance(event, TextDelta):
            kind = "text"
        elif isinstance(event, ThinkingDelta):
            kind = "thinking"
        elif isinstance(event, ToolCallDelta):
            kind = "tool"
        elif isinstance(event, UsageEvent):
            kind = "usage"
        elif isinstance(event, ErrorEvent):
            kind = "error"
        elif isinstance(event, Done):
            kind = "done"
        else:
            continue
        if batches and batches[-1][0] == kind:
            batches[-1][1].append(event)
        else:
            batches.append((kind, [event]))
    return batches


def _paragraph_end(written: str, text: str) -> int | None:
    """Where in ``text``, which follows ``written``, the first paragraph with
    words ends (just after its blank line); None if it does not end in it."""
    joined = written[-1:] + text
    start = 0
    if not written.strip():  # a blank line before the first words ends nothing
        start = next((i for i, char in enumerate(joined) if not char.isspace()), len(joined))
    found = joined.find("\n\n", start)
    return None if found < 0 else found + 2 - len(written[-1:])
