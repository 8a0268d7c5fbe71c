"""A model's thinking: one dim line until expanded."""

from __future__ import annotations

from textual import events
from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui import keymap
from tui.widgets._text import clean, one_line

PREVIEW_CHARS = 300


class ThinkingBlock(Widget, can_focus=True):
    """A thinking block, collapsed to a one-line preview; Enter or a click expands it.

    All thinking blocks of a chat view are hidden together by its ``show_thinking``.
    """

    DEFAULT_CSS = """
    ThinkingBlock {
        height: auto;
        color: $text-muted;
        text-style: italic;
        padding: 0 1 0 0;
        margin: 0 0 1 0;
        &.-collapsed {
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        &:focus {
            background: $boost;
        }
    }
    """

    BINDINGS = keymap.bindings_of("chat_toggle_thinking")

    expanded: reactive[bool] = reactive(False, layout=True)
    """Is the full text shown?"""

    def __init__(
        self,
        text: str = "",
        *,
        redacted: bool = False,
        live: bool = False,
        expanded: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """
        Args:
            text: The thinking text (untrusted: it is cleaned here).
            redacted: A redacted block: the text is opaque and never shown.
            live: The block is still being streamed.
            expanded: Start expanded.
        """
        super().__init__(id=id, classes=classes)
        self._text = clean(text)
        self.redacted = redacted
        self.live = live
        self.set_reactive(ThinkingBlock.expanded, expanded)
        self.set_class(not expanded, "-collapsed")

    @property
    def text(self) -> str:
        """The (cleaned) thinking text."""
        return self._text

    def append(self, text: str) -> None:
        """Add streamed text."""
        if not text:
            return
        self._text += clean(text)
        # A collapsed block is one line: no layout needed.
        self.refresh(layout=self.expanded)

    def finish(self, text: str, redacted: bool = False) -> None:
        """Show the final text of the block."""
        self._text = clean(text)
        self.redacted = redacted
        self.live = False
        self.refresh(layout=True)

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(not expanded, "-collapsed")

    def action_expand_or_collapse(self) -> None:
        self.expanded = not self.expanded

    async def _on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_expand_or_collapse()

    def render(self) -> RenderResult:
        arrow = "▾" if self.expanded else "▸"
        label = "Thinking…" if self.live else "Thinking"
        if self.redacted:
            return Content.assemble(f"{arrow} {label} (redacted)")
        if self.expanded:
            return Content.assemble((f"{arrow} {label}", "bold"), "\n", self._text)
        if self.live:
            # While streaming, the preview follows the newest line.
            lines = [line for line in self._text[-2 * PREVIEW_CHARS :].splitlines() if line.strip()]
            preview = " ".join(lines[-1].split())[-PREVIEW_CHARS:] if lines else ""
        else:
            preview = one_line(self._text[: 4 * PREVIEW_CHARS], PREVIEW_CHARS)
        return Content.assemble(f"{arrow} {label}", (" · " + preview) if preview else "")
