"""The conversation: the current path as a scrolling column of messages.

Only a window of rows is mounted: the last :attr:`ChatView.INITIAL_ROWS` when
a path is opened, older rows in batches of :attr:`ChatView.BATCH_ROWS` as the
view nears the top (newer ones as it nears the bottom of a window that was
moved up), and rows far outside the viewport are unmounted again once the
window holds more than :attr:`ChatView.MAX_ROWS`. Opening 10,000 messages
therefore costs what opening a dozen does.

Textual only anchors scrolling to the bottom, so the view keeps its place
itself: each layout pass (``arrange``) notes the first row in view and, when
rows above it were mounted, unmounted or resized, moves the scroll offset (and
any running scroll animation) by as much as that row moved, in the same pass,
so nothing on screen jumps. The Textual internals this needs are in
:mod:`tui.internals.textual_private`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from textual.app import ComposeResult
from textual.color import Color
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.layout import DockArrangeResult
from textual.message import Message as TextualMessage
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker

from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note
from core.sessions.messages import Message
from core.tools.outcome import saved_outcomes
from tui import keymap
from tui.internals.textual_private import anchored, following, mark_anchored, shift_scroll
from tui.widgets._context import (
    BlobLoader,
    BranchInfoLookup,
    ContextNoteLookup,
    ImageMode,
    ViewContext,
)
from tui.widgets._text import human_count, one_line
from tui.widgets._transcript import Transcript
from tui.widgets._window import (
    Span,
    anchor_row,
    end_window,
    far_above,
    far_below,
    kept_rows,
    start_window,
    window_at,
)
from tui.widgets.assistant_message import AssistantMessage
from tui.widgets.markers import (
    BranchSummaryMarker,
    CompactionMarker,
    ModelChangeLine,
    NoteLine,
    PinnedNoteLine,
)
from tui.widgets.message_widget import MessageWidget
from tui.widgets.reply_view import ReplyView
from tui.widgets.thinking_block import ThinkingBlock
from tui.widgets.tool_result_message import ToolResultMessage
from tui.widgets.user_message import UserMessage


class ChatView(VerticalScroll):
    """The messages of the current path, newest at the bottom.

    Follows the bottom while the user is there (new rows and a streaming reply
    stay in view); scrolling up stops following, scrolling back to the bottom
    resumes it.
    """

    BLANK = True
    """The view paints nothing of its own (no border, no text): Textual fills its
    lines with its background at once instead of rendering each (all of them at
    every scroll, twice a short exchange)."""

    DEFAULT_CSS = """
    ChatView {
        height: 1fr;
        padding: 0 1 0 0;
        & > .older-hint {
            width: 1fr;
            color: $text-muted;
            text-style: dim;
            text-align: center;
            margin: 0 0 1 0;
        }
        &.-hide-thinking ThinkingBlock {
            display: none;
        }
    }
    """

    BINDINGS = keymap.bindings_of("chat_first", "chat_last")

    INITIAL_ROWS = 12
    """Rows mounted when a path is opened."""
    BATCH_ROWS = 6
    """Rows mounted at a time as the view nears either end of the window."""
    MAX_ROWS = 30
    """Beyond this many mounted rows, rows far outside the viewport are unmounted."""
    FOLLOW_ROWS = 18
    """While following the bottom, rows beyond this many and a screen above the view are unmounted:
    every layout pass walks every mounted widget, typing included."""

    show_thinking: reactive[bool] = reactive(True)
    """Show thinking blocks (each collapsed to a line until expanded)."""

    class ErrorShown(TextualMessage):
        """A reply finished with an error (the user may retry it)."""

        def __init__(self, entry_id: str, error: str) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.error = error

    RetryRequested = AssistantMessage.RetryRequested
    """Posted (as ``AssistantMessage.RetryRequested``) when the retry hint of an error is clicked."""

    def __init__(
        self,
        *,
        blob_loader: BlobLoader | None = None,
        show_thinking: bool = True,
        image_mode: ImageMode = "auto",
        branch_info: BranchInfoLookup | None = None,
        context_note: ContextNoteLookup | None = None,
        retry_key: str | None = None,
        opener: str | None = None,
        agent_colors: Mapping[str, Color] | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """
        Args:
            blob_loader: Loads image bytes by sha256 (``None``: images show a note).
            show_thinking: Show thinking blocks.
            image_mode: ``auto`` (best terminal protocol), ``halfcell``, ``unicode`` or ``none``.
            branch_info: Alternatives and label of a message (``◀ 2/3 ▶``); ``None``: none shown.
            context_note: How the model sees a message not sent whole; ``None``: nothing said.
            retry_key: The key a failed reply's hint names (``None``: the default keymap's).
            opener: The command that opens an attached file (``None``: the system's).
            agent_colors: Round-table agents' colours by name casefolded (``None``: none).
        """
        super().__init__(id=id, classes=classes)
        self.context = ViewContext(
            blob_loader=blob_loader,
            image_mode=image_mode,
            branch_info=branch_info,
            context_note=context_note,
            retry_key=retry_key or keymap.first_key("retry"),
            opener=opener,
            agent_colors=agent_colors or {},
        )
        self.set_reactive(ChatView.show_thinking, show_thinking)
        self._transcript = Transcript()
        self._lo = 0
        self._hi = 0
        self._rows: list[MessageWidget] = []
        """Mounted row widgets: rows ``_lo`` to ``_hi - 1``."""
        self._reply: ReplyView | None = None
        self._older_hint = Static("", markup=False, classes="older-hint")
        self._window_lock = asyncio.Lock()
        self._loading = False
        self._check_scheduled = False
        self._anchor_widget: Widget | None = None
        self._anchor_y = 0
        self._regions: dict[Widget, Region] = {}

    def compose(self) -> ComposeResult:
        yield self._older_hint

    def on_mount(self) -> None:
        self.set_class(not self.show_thinking, "-hide-thinking")
        self._update_hint()
        self.anchor()

    # --- public interface ---------------------------------------------------

    @property
    def entries(self) -> list[Entry]:
        """The entries shown (the whole path, mounted or not; a reply once finished)."""
        return list(self._transcript.entries)

    @property
    def message_widgets(self) -> list[MessageWidget]:
        """The mounted rows, top to bottom (a streaming reply last)."""
        rows = list(self._rows)
        if self._reply is not None:
            rows.append(self._reply)
        return rows

    @property
    def window(self) -> tuple[int, int]:
        """The range of rows mounted: ``(first, last + 1)`` of :attr:`row_count`."""
        return self._lo, self._hi

    @property
    def row_count(self) -> int:
        """How many rows the path is shown as (tool results share their call's row)."""
        return len(self._transcript)

    @property
    def reply(self) -> ReplyView | None:
        """The reply streaming now, if any."""
        return self._reply

    async def set_entries(self, entries: Sequence[Entry]) -> None:
        """Show this path (a session opened, another branch): the newest rows, at the bottom.

        Rows the new path shares with the one shown keep their widgets, so
        moving to a sibling re-renders only what differs, and the rows of the
        path are worked out only for the entries that differ."""
        async with self._window_lock:
            old = self._transcript
            self._transcript = old.for_path(entries)
            total = len(self._transcript)
            await self._replace_window(
                *end_window(total, self.INITIAL_ROWS),
                keep_reply=False,
                shared=self._transcript.shared_rows(old),
            )
        self.anchor()
        self._schedule_check()

    async def append_entry(self, entry: Entry) -> None:
        """Add an entry at the bottom: a message, a compaction, a tool result (shown in its card)..."""
        payload = entry.payload
        is_user = isinstance(payload, Message) and payload.role == "user"
        async with self._window_lock:
            at_end = self._hi == len(self._transcript)
            dim_before = self._transcript.dim_before
            index, new_row = self._transcript.add(entry)
            if not new_row:
                await self._attach_results(entry)
            elif at_end:
                widget = self._make_row(index)
                self._rows.append(widget)
                self._hi = index + 1
                if self._reply is not None and self._reply.is_attached:
                    await self.mount(widget, before=self._reply)
                else:
                    await self.mount(widget)
                await self._trim_following()
            elif is_user:
                # The user just sent this: show the end of the path.
                total = len(self._transcript)
                await self._replace_window(*end_window(total, self.INITIAL_ROWS), keep_reply=True)
            if self._transcript.dim_before != dim_before:
                self._update_dimming()
            self._update_hint()
        if is_user:
            self.anchor()
        self._schedule_check()

    def start_reply(self, model: str, agent: str | None = None) -> ReplyView:
        """Start a live assistant message at the bottom and return it (feed it
        events); ``agent``: the round-table agent answering, if any."""
        if self._reply is not None and not self._reply.is_finished:
            # A reply that was never finished: drop it.
            self._reply.remove()
        reply = ReplyView(model, self.context, agent=agent, on_finished=self._reply_finished)
        self._reply = reply
        if self._hi == len(self._transcript):
            self.mount(reply)
        else:
            self.run_worker(self._jump_to_end_and_mount(reply), group="chat-window")
        return reply

    def refresh_context_notes(self) -> None:
        """Say again on the mounted rows how the model sees them (after a turn or a move)."""
        for widget in self.message_widgets:
            widget.show_context_note()

    def refresh_branch_info(self) -> None:
        """Show the mounted rows' alternatives and labels again (after the tree changed)."""
        for widget in self.message_widgets:
            widget.show_branch_info()

    async def scroll_to_entry(
        self, entry_id: str, *, animate: bool = False
    ) -> MessageWidget | None:
        """Bring the row showing ``entry_id`` into view (mounting it if needed); return it."""
        index = self._transcript.row_index(entry_id)
        if index is None:
            return None
        async with self._window_lock:
            if not (self._lo <= index < self._hi):
                if self._reply is not None:
                    return None  # the window cannot move away from a streaming reply
                lo, hi = window_at(index, len(self._transcript), self.INITIAL_ROWS)
                await self._replace_window(lo, hi, keep_reply=True)
            widget = self._rows[index - self._lo]
        self.release_anchor()
        self.call_after_refresh(self.scroll_to_widget, widget, animate=animate, top=True)
        return widget

    async def focus_entry(self, entry_id: str) -> MessageWidget | None:
        """Scroll to the row showing ``entry_id`` and focus it."""
        widget = await self.scroll_to_entry(entry_id)
        if widget is not None:
            widget.focus(scroll_visible=False)
        return widget

    async def focus_neighbor(self, widget: MessageWidget, direction: int) -> MessageWidget | None:
        """Focus the row above (``-1``) or below (``+1``) ``widget``, mounting more rows if needed."""
        rows = self.message_widgets
        if widget not in rows:
            return None
        position = rows.index(widget) + direction
        if position < 0 and self._lo > 0:
            await self._mount_older()
            rows = self.message_widgets
            position = rows.index(widget) - 1
        elif position >= len(rows) and self._hi < len(self._transcript):
            await self._mount_newer()
            rows = self.message_widgets
            position = rows.index(widget) + 1
        if 0 <= position < len(rows):
            target = rows[position]
            target.focus()
            return target
        return None

    # --- actions and watchers -------------------------------------------------

    def watch_show_thinking(self, show_thinking: bool) -> None:
        # The class hides thinking blocks mounted from now on; those already mounted are
        # switched one by one (restyling every widget under the view would be slow).
        self.set_class(not show_thinking, "-hide-thinking", update=False)
        for block in self.query(ThinkingBlock):
            block.display = show_thinking

    async def action_first_message(self) -> None:
        if self._lo > 0 and self._reply is None:
            async with self._window_lock:
                await self._replace_window(
                    *start_window(len(self._transcript), self.INITIAL_ROWS), keep_reply=True
                )
        self.release_anchor()
        self.scroll_home(animate=False)
        self._focus_edge(0)

    async def action_last_message(self) -> None:
        if self._hi < len(self._transcript):
            async with self._window_lock:
                total = len(self._transcript)
                await self._replace_window(*end_window(total, self.INITIAL_ROWS), keep_reply=True)
        self.anchor()
        self._focus_edge(-1)

    def page_down(self) -> None:
        """Scroll a page down; a page that reaches the bottom follows it again.
        Textual's page ends where the bottom was when the key was pressed, and
        resumes following only if the view gets there: while a reply streams
        the bottom moves on first, and the view would stay put."""
        page = self.scrollable_content_region.height
        if self._hi == len(self._transcript) and self.scroll_target_y + page >= self.max_scroll_y:
            self.anchor()
        else:
            self.scroll_page_down()

    def _focus_edge(self, index: int) -> None:
        """Home and End on a focused message move the focus too, not only the view."""
        rows = self.message_widgets
        focused = self.screen.focused
        if rows and focused is not None and self in focused.ancestors:
            rows[index].focus(scroll_visible=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # The window's workers and the replies' render loops: nothing above
        # waits on them, and each change would travel up to the app.
        event.stop()

    def watch_has_focus(self, has_focus: bool) -> None:
        # Widget's own watcher restyles every descendant (the whole window of rows).
        self.app.stylesheet.update_nodes([self], animate=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._schedule_check()

    def on_resize(self) -> None:
        self._schedule_check()

    def on_segmented_markdown_all_made(self) -> None:
        self._schedule_check()

    # --- building rows -------------------------------------------------------------

    def _make_row(self, index: int) -> MessageWidget:
        row = self._transcript.rows[index]
        entry, payload = row.entry, row.entry.payload
        widget: MessageWidget
        if isinstance(payload, Message):
            if payload.role == "user":
                widget = UserMessage(entry, self.context)
            elif payload.role == "assistant":
                widget = AssistantMessage(entry, self.context, row.results, row.outcomes)
            elif payload.role == "tool_result":
                widget = ToolResultMessage(entry, self.context)
            else:
                widget = NoteLine(entry, self.context)
        elif isinstance(payload, Compaction):
            widget = CompactionMarker(entry, self.context)
        elif isinstance(payload, BranchSummary):
            widget = BranchSummaryMarker(entry, self.context)
        elif isinstance(payload, ModelChange):
            widget = ModelChangeLine(entry, self.context)
        elif isinstance(payload, Note):
            widget = PinnedNoteLine(entry, self.context)
        else:  # pragma: no cover - every payload type is handled above
            widget = NoteLine(entry, self.context)
        if index < self._transcript.dim_before:
            widget.add_class("-compacted")
        return widget

    def _row_widget(self, index: int | None) -> MessageWidget | None:
        if index is None or not (self._lo <= index < self._hi):
            return None
        return self._rows[index - self._lo]

    async def _attach_results(self, entry: Entry) -> None:
        payload = entry.payload
        if not isinstance(payload, Message):
            return
        outcomes = saved_outcomes(payload)
        for result in payload.tool_results:
            widget = self._row_widget(self._transcript.row_of_call(result.tool_call_id))
            if isinstance(widget, AssistantMessage):
                await widget.set_tool_result(result, outcomes[result.tool_call_id])

    def _update_dimming(self) -> None:
        dim_before = self._transcript.dim_before
        for offset, widget in enumerate(self._rows):
            widget.set_class(self._lo + offset < dim_before, "-compacted")

    def _update_hint(self) -> None:
        hidden = self._lo
        self._older_hint.display = hidden > 0
        if hidden:
            noun = "message" if hidden == 1 else "messages"
            self._older_hint.update(f"▲ {human_count(hidden)} earlier {noun}")

    # --- the window ---------------------------------------------------------------

    async def _replace_window(self, lo: int, hi: int, *, keep_reply: bool, shared: int = 0) -> None:
        """Mount rows ``lo`` to ``hi - 1`` instead of the current ones (call with
        the lock held). Mounted rows below ``shared`` show the same as before
        and stay mounted."""
        span = kept_rows(lo, hi, (self._lo, self._hi), shared)
        kept_lo, kept_hi = span if span is not None else (hi, hi)
        kept = self._rows[kept_lo - self._lo : kept_hi - self._lo]
        old: list[Widget] = [w for w in self._rows if w not in kept]
        if not keep_reply and self._reply is not None:
            old.append(self._reply)
            self._reply = None
        above = [self._make_row(index) for index in range(lo, kept_lo)]
        below = [self._make_row(index) for index in range(kept_hi, hi)]
        self._anchor_widget = None
        with self.app.batch_update():
            if old:
                await self.remove_children(old)
            self._rows, self._lo, self._hi = [*above, *kept, *below], lo, hi
            self._update_hint()
            if above:
                await self.mount_all(above, before=kept[0] if kept else self._reply_if_attached())
            if below:
                await self.mount_all(below, after=kept[-1])
            for widget in kept:
                widget.show_branch_info()
        if kept:
            self._update_dimming()
        self._sync_anchor()

    def _reply_if_attached(self) -> ReplyView | None:
        return self._reply if self._reply is not None and self._reply.is_attached else None

    async def _jump_to_end_and_mount(self, reply: ReplyView) -> None:
        async with self._window_lock:
            total = len(self._transcript)
            await self._replace_window(*end_window(total, self.INITIAL_ROWS), keep_reply=True)
            if reply is self._reply:
                await self.mount(reply)
        self.anchor()

    def _reply_finished(self, reply: ReplyView, entry: Entry) -> None:
        if reply is not self._reply:
            return
        self._reply = None
        index, new_row = self._transcript.add(entry)
        if new_row and index == self._hi:
            self._rows.append(reply)
            self._hi = index + 1
            self.call_after_refresh(self._trim_top_when_worth_it)  # where it ends is known then
        elif new_row:
            reply.remove()
        self._sync_anchor()
        message = entry.payload
        if isinstance(message, Message) and message.stop_reason == "error":
            self.post_message(self.ErrorShown(entry.id, one_line(message.error, 300)))

    def _schedule_check(self) -> None:
        if not self._check_scheduled and self.is_attached:
            self._check_scheduled = True
            self.call_after_refresh(self._check_window)

    def _check_window(self) -> None:
        """Load rows near the ends of the window, drop far ones, hide far Markdown segments."""
        self._check_scheduled = False
        if not self.is_attached:
            return
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        if not self._loading and not self._window_lock.locked():
            if self._lo > 0 and self.scroll_y < height:
                self._loading = True
                self.run_worker(self._load_older(), group="chat-window")
                return
            if self._hi < len(self._transcript) and self.max_scroll_y - self.scroll_y < height:
                self._loading = True
                self.run_worker(self._load_newer(), group="chat-window")
                return
            # Rows appended faster than the layout followed them were kept
            # (their place was not known yet): drop them now that it is.
            self._trim_top_when_worth_it()
        self._update_visibility()

    async def _load_older(self) -> None:
        try:
            await self._mount_older()
        finally:
            self._loading = False
        self._schedule_check()

    async def _load_newer(self) -> None:
        try:
            await self._mount_newer()
        finally:
            self._loading = False
        self._schedule_check()

    async def _mount_older(self) -> None:
        async with self._window_lock:
            if self._lo == 0:
                return
            lo = max(0, self._lo - self.BATCH_ROWS)
            widgets = [self._make_row(index) for index in range(lo, self._lo)]
            first = self._rows[0] if self._rows else self._reply
            if first is not None and first.is_attached:
                await self.mount_all(widgets, before=first)
            else:
                await self.mount_all(widgets)
            self._rows[0:0] = widgets
            self._lo = lo
            self._update_hint()
            await self._trim(from_top=False)

    async def _mount_newer(self) -> None:
        async with self._window_lock:
            total = len(self._transcript)
            if self._hi >= total:
                return
            hi = min(total, self._hi + self.BATCH_ROWS)
            widgets = [self._make_row(index) for index in range(self._hi, hi)]
            await self.mount_all(widgets, after=self._rows[-1] if self._rows else self._older_hint)
            self._rows.extend(widgets)
            self._hi = hi
            await self._trim(from_top=True)
            self._sync_anchor()

    def _trim_top_when_worth_it(self) -> None:
        """Drop rows far above the bottom now if there are a batch of them.
        Fewer wait for the next message appended: its mount drops them in the
        same layout pass (each removal on its own costs a pass over the window)."""
        if self.is_attached and following(self) and self._far_above_following() >= self.BATCH_ROWS:
            self.run_worker(self._trim_top(), group="chat-window")

    async def _trim_top(self) -> None:
        async with self._window_lock:
            await self._trim_following()

    async def _trim_following(self) -> None:
        """At the bottom, keep few rows above the view (call with the lock held)."""
        if following(self):
            await self._trim(from_top=True, limit=self.FOLLOW_ROWS, screens_above=1)
        else:
            await self._trim(from_top=True)

    async def _trim(
        self, *, from_top: bool, limit: int | None = None, screens_above: int = 2
    ) -> None:
        """Unmount rows beyond ``limit`` (:attr:`MAX_ROWS`) that are far from the view:
        more than ``screens_above`` screens above it, or three screens below."""
        excess = len(self._rows) - (self.MAX_ROWS if limit is None else limit)
        if excess <= 0:
            return
        doomed: list[MessageWidget] = []
        if from_top:
            doomed = self._rows[: self._far_above(excess, screens_above)]
            if doomed:
                del self._rows[: len(doomed)]
                self._lo += len(doomed)
        else:
            if self._reply is not None:
                return  # never cut the rows between the viewport and a streaming reply
            bottom = self.scroll_y + 3 * self.scrollable_content_region.height
            count = far_below([self._span(widget) for widget in self._rows], excess, bottom)
            doomed = self._rows[len(self._rows) - count :] if count else []
            if doomed:
                del self._rows[len(self._rows) - len(doomed) :]
                self._hi -= len(doomed)
        if doomed:
            await self.remove_children(doomed)
            self._update_hint()
            self._sync_anchor()

    def _far_above(self, excess: int, screens_above: int) -> int:
        """How many of the first ``excess`` rows end more than ``screens_above``
        screens above the view."""
        if excess <= 0:
            return 0
        top = self.scroll_y - screens_above * self.scrollable_content_region.height
        return far_above([self._span(widget) for widget in self._rows[:excess]], excess, top)

    def _far_above_following(self) -> int:
        """How many rows :meth:`_trim_following` would drop at the bottom now."""
        return self._far_above(len(self._rows) - self.FOLLOW_ROWS, 1)

    def _span(self, widget: Widget) -> Span | None:
        region = self._regions.get(widget)
        return (region.y, region.bottom) if region is not None else None

    def _sync_anchor(self) -> None:
        """Follow the bottom only when the window reaches the end of the path."""
        at_end = self._hi == len(self._transcript)
        if at_end and not anchored(self):
            # Resume following once the user scrolls to the bottom.
            mark_anchored(self)
            self.release_anchor()
        elif not at_end and anchored(self):
            self.anchor(False)

    def _update_visibility(self) -> None:
        height = self.screen.size.height
        for widget in self.message_widgets:
            if isinstance(widget, AssistantMessage):
                widget.update_visibility(-height, 2 * height)

    # --- keeping the view in place ------------------------------------------------

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        result = super().arrange(size, optimal)
        self._keep_position(result, size)
        return result

    def _keep_position(self, result: DockArrangeResult, size: Size) -> None:
        """Move the scroll offset by as much as the first row in view moved since the last pass."""
        regions = {placement.widget: placement.region for placement in result.placements}
        self._regions = regions
        is_following = following(self)
        anchor = self._anchor_widget
        if anchor is not None and not is_following:
            region = regions.get(anchor)
            if region is not None and region.y != self._anchor_y:
                shift_scroll(self, region.y - self._anchor_y)
        # Note the row to hold on to in the next pass: the first that starts in view,
        # or else the one the view starts inside.
        top = round(self.scroll_y)
        # ``size`` is the scrollable area: asking the widget for its region here would
        # make the compositor lay out the whole screen again, inside this layout pass.
        bottom = top + max(1, size.height)
        rows = [p for p in result.placements if p.widget is not self._older_hint]
        index = anchor_row([(p.region.y, p.region.bottom) for p in rows], top, bottom)
        chosen = rows[index].widget if index is not None else None
        self._anchor_widget = chosen
        self._anchor_y = regions[chosen].y if chosen is not None else 0


__all__ = ["ChatView", "MessageWidget", "ReplyView"]
