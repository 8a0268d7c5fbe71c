"""Thin rows: model changes, notes, pinned notes, and the compaction /
branch-summary markers.

These rows are small and alike, so they share a module (as Textual's Markdown
blocks do).
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Markdown, Static

from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note
from core.sessions.messages import Message
from core.sessions.note import depth_words
from tui import keymap
from tui.widgets._context import ViewContext
from tui.widgets._text import clean, clip_lines, human_count, one_line
from tui.widgets.message_widget import MessageWidget

NOTE_LINES = 6
"""Lines of a custom/system note shown before "… more"."""


class ModelChangeLine(MessageWidget):
    """A thin dim line: ``model: X · thinking: Y``."""

    DEFAULT_CSS = """
    ModelChangeLine {
        color: $text-muted;
        text-style: dim;
        margin: 0 0 1 0;
    }
    """

    def render(self) -> RenderResult:
        payload = self.entry.payload if self.entry is not None else None
        if not isinstance(payload, ModelChange):
            return Content("")
        return Content.assemble(
            "── model: ",
            one_line(payload.model, 120),
            " · thinking: ",
            one_line(payload.thinking, 20),
        )


class PinnedNoteLine(MessageWidget):
    """Where a note was pinned (``/note``): its depth and text, or that it was
    removed. Every later request carries it until a newer one replaces it."""

    DEFAULT_CSS = """
    PinnedNoteLine {
        color: $text-warning;
        margin: 0 0 1 0;
    }
    """

    def render(self) -> RenderResult:
        payload = self.entry.payload if self.entry is not None else None
        if not isinstance(payload, Note):
            return Content("")
        if not payload.active:
            return Content("── note removed (/note TEXT pins a new one)")
        text, hidden = clip_lines(clean(payload.text).strip("\n"), NOTE_LINES)
        more = f"\n… {human_count(hidden)} more lines" if hidden else ""
        return Content.assemble(
            (f"── note pinned {depth_words(payload.depth)} from the end: ", "bold"), text, more
        )


class NoteLine(MessageWidget):
    """A dim note: a ``custom`` message (shown to the user, never sent) or the system prompt."""

    DEFAULT_CSS = """
    NoteLine {
        color: $text-muted;
        text-style: italic;
    }
    """

    def render(self) -> RenderResult:
        message = self.entry.payload if self.entry is not None else None
        if not isinstance(message, Message):
            return Content("")
        if message.role == "system":
            label = "system"
        elif message.role == "custom":
            label = one_line(message.custom_type, 40) or "note"
        else:
            label = message.role
        text, hidden = clip_lines(clean(message.text).strip("\n"), NOTE_LINES)
        more = f"\n… {human_count(hidden)} more lines" if hidden else ""
        return Content.assemble((f"{label}: ", "bold"), text, more)


class SummaryMarker(MessageWidget):
    """A marker that expands (Enter or a click) to show a Markdown summary."""

    DEFAULT_CSS = """
    SummaryMarker {
        & > .marker-title {
            color: $text-muted;
        }
        & > .marker-summary {
            display: none;
            padding: 0 0 0 2;
            color: $text-muted;
        }
        &.-expanded > .marker-summary {
            display: block;
        }
    }
    """

    BINDINGS = keymap.bindings_of("chat_toggle_marker")

    expanded: reactive[bool] = reactive(False)
    """Is the summary shown?"""

    def __init__(
        self,
        entry: Entry,
        context: ViewContext | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(entry, context, id=id, classes=classes)
        self._title = Static(markup=False, classes="marker-title")
        self._summary: Markdown | None = None

    @property
    def summary(self) -> str:
        """The summary text (cleaned)."""
        return clean(getattr(self.entry.payload, "summary", "") if self.entry else "")

    def title(self) -> Content:
        """The one-line title."""
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        yield self._title

    def on_mount(self) -> None:
        self._update_title()

    def _update_title(self) -> None:
        arrow = "▾" if self.expanded else "▸"
        self._title.update(Content.assemble(f"{arrow} ", self.title()))

    async def watch_expanded(self, expanded: bool) -> None:
        if not self.is_mounted:
            return
        self.set_class(expanded, "-expanded")
        self._update_title()
        if expanded and self._summary is None:
            # The summary is only built the first time it is asked for.
            self._summary = Markdown(self.summary, classes="marker-summary", open_links=False)
            await self.mount(self._summary)
        if expanded:
            self.call_after_refresh(self._bring_into_view)

    def _bring_into_view(self) -> None:
        """Show the summary from its top: at the bottom of the chat, the view
        follows the end and the summary opened out of sight."""
        view = next(
            (a for a in self.ancestors if isinstance(a, Widget) and a.allow_vertical_scroll), None
        )
        if view is not None:
            view.release_anchor()
            view.scroll_to_widget(self, animate=False, top=True)

    def action_expand_or_collapse(self) -> None:
        self.expanded = not self.expanded

    async def _on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_expand_or_collapse()


class CompactionMarker(SummaryMarker):
    """``compacted N tokens``; expands to the summary that replaced them."""

    DEFAULT_CSS = """
    CompactionMarker > .marker-title {
        color: $text-warning;
    }
    """

    def title(self) -> Content:
        payload = self.entry.payload if self.entry else None
        tokens = payload.tokens_before if isinstance(payload, Compaction) else 0
        label = f"compacted {human_count(tokens)} tokens" if tokens else "compacted"
        return Content.assemble(
            ("━━ ", "dim"), (label, "bold"), (" · earlier messages are summarized", "dim")
        )


class BranchSummaryMarker(SummaryMarker):
    """A summary of a branch the user left; expands to the summary."""

    def title(self) -> Content:
        payload = self.entry.payload if self.entry else None
        preview = one_line(payload.summary, 100) if isinstance(payload, BranchSummary) else ""
        return Content.assemble(
            ("⎇ ", "dim"), ("branch summary", "bold"), (f" · {preview}" if preview else "")
        )
