"""A tool call and its result, as a card."""

from __future__ import annotations

import json
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.highlight import highlight
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from core.content import ImageContent, ToolCallContent, ToolResultContent
from tui.widgets._context import ViewContext
from tui.widgets._text import clean, clip_lines, human_count, one_line, plain
from tui.widgets.image_view import ImageView

ARGUMENT_LINES = 4
"""Argument lines shown while collapsed."""
RESULT_LINES = 6
"""Result lines shown while collapsed."""
MAX_CHARS = 200_000
"""Even expanded, text beyond this is left out (the full text stays in the session)."""


def format_arguments(arguments: dict[str, Any] | None, raw: str = "") -> str:
    """Arguments as pretty JSON (the raw text when they did not parse)."""
    if arguments:
        try:
            return json.dumps(arguments, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            pass
    return raw


class ToolCallCard(Widget, can_focus=True):
    """Tool name, arguments (pretty JSON) and result or error.

    Long arguments and results are collapsed to a few lines; Enter or a click
    expands the card.
    """

    DEFAULT_CSS = """
    ToolCallCard {
        height: auto;
        border: round $secondary 50%;
        border-title-color: $text-secondary;
        padding: 0 1;
        margin: 0 0 1 0;
        &.-error {
            border: round $error 70%;
            border-title-color: $text-error;
        }
        &:focus {
            border: round $accent;
        }
        & > .tool-arguments {
            color: $text-muted;
        }
        & > .tool-result {
            margin: 1 0 0 0;
        }
        & > .tool-result.-error {
            color: $text-error;
        }
        & > .tool-more {
            color: $text-muted;
            text-style: italic;
        }
    }
    """

    BINDINGS = [
        Binding("enter", "toggle", "Expand / collapse", id="chat.toggle-tool", show=False),
    ]

    expanded: reactive[bool] = reactive(False)
    """Are the full arguments and result shown?"""

    def __init__(
        self,
        call: ToolCallContent | None = None,
        result: ToolResultContent | None = None,
        context: ViewContext | None = None,
        *,
        live: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """
        Args:
            call: The call (``None`` for a result whose call is not on the path).
            result: Its result, if there is one yet.
            live: The call is still being streamed.
        """
        super().__init__(id=id, classes=classes)
        self.context = context or ViewContext()
        self.call_id = call.id if call is not None else (result.tool_call_id if result else "")
        self.tool_name = call.name if call is not None else ""
        self._arguments_text = format_arguments(call.arguments, call.raw_arguments) if call else ""
        self.result = result
        self.live = live
        self._args = Static(markup=False, classes="tool-arguments")
        self._result = Static(markup=False, classes="tool-result")
        self._more = Static(markup=False, classes="tool-more")

    def compose(self) -> ComposeResult:
        yield self._args
        yield self._result
        yield self._more
        if self.result is not None:
            for block in self.result.content:
                if isinstance(block, ImageContent):
                    yield ImageView(block, self.context)

    def on_mount(self) -> None:
        self._refresh_content()

    # --- updates ------------------------------------------------------------

    def append_call(self, *, call_id: str | None, name: str | None, arguments: str) -> None:
        """Add a streamed piece of the call."""
        if call_id:
            self.call_id = call_id
        if name:
            self.tool_name += name
        self._arguments_text += arguments
        self._refresh_content()

    def finish_call(self, call: ToolCallContent) -> None:
        """Show the final call."""
        self.call_id = call.id
        self.tool_name = call.name
        self._arguments_text = format_arguments(call.arguments, call.raw_arguments)
        self.live = False
        self._refresh_content()

    async def set_result(self, result: ToolResultContent) -> None:
        """Show the call's result (and any images in it)."""
        self.result = result
        self._refresh_content()
        images = [block for block in result.content if isinstance(block, ImageContent)]
        if images and self.is_mounted:
            await self.query(ImageView).remove()
            await self.mount_all([ImageView(image, self.context) for image in images])

    def watch_expanded(self) -> None:
        if self.is_mounted:
            self._refresh_content()

    def action_toggle(self) -> None:
        self.expanded = not self.expanded

    def _on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_toggle()

    # --- rendering ----------------------------------------------------------

    @property
    def arguments_text(self) -> str:
        """The arguments as shown when expanded (cleaned)."""
        return clean(self._arguments_text)

    @property
    def result_text(self) -> str:
        """The result text (cleaned)."""
        return clean(self.result.text) if self.result is not None else ""

    def _refresh_content(self) -> None:
        result = self.result
        is_error = bool(result and result.is_error)
        self.set_class(is_error, "-error")
        self.border_title = self._title(is_error)

        hidden = 0
        arguments = self.arguments_text[:MAX_CHARS]
        if not self.expanded:
            arguments, clipped = clip_lines(arguments, ARGUMENT_LINES)
            hidden += clipped
        self._args.display = bool(arguments)
        self._args.update(self._highlight_json(arguments))

        text = self.result_text[:MAX_CHARS]
        if result is not None and not text and not any(isinstance(block, ImageContent) for block in result.content):
            text = "(no output)"
        if not self.expanded:
            text, clipped = clip_lines(text, RESULT_LINES)
            hidden += clipped
        self._result.display = bool(text)
        self._result.set_class(is_error, "-error")
        self._result.update(Content(text))

        if hidden:
            more = f"… {human_count(hidden)} more lines · enter to expand"
        elif self.expanded and self._is_long():
            more = "enter to collapse"
        else:
            more = ""
        self._more.display = bool(more)
        self._more.update(Content(more))

    def _is_long(self) -> bool:
        return self.arguments_text.count("\n") >= ARGUMENT_LINES or self.result_text.count("\n") >= RESULT_LINES

    def _title(self, is_error: bool) -> Content:
        name = one_line(self.tool_name, 80) or "tool"
        if self.live:
            status = "…"
        elif self.result is None:
            status = ""
        elif is_error:
            status = "✗ error"
        else:
            status = "✓"
        return Content.assemble(("⚙ ", "dim"), (name, "bold"), (f" {status}" if status else ""))

    @staticmethod
    def _highlight_json(text: str) -> Content:
        if not text:
            return Content("")
        try:
            return highlight(text, language="json")
        except Exception:  # a highlighter failure must not hide the arguments
            return plain(text)
