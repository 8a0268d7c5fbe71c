"""A tool call and its result, as a card.

The title says where the call is: streaming (``…``), waiting (for its turn or
the user's approval), running (with a ticking time), done, error or denied,
with how long it ran. A finished card shows what was saved with the result
(:mod:`core.tools.outcome`), so a reopened session shows the same cards.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.highlight import highlight
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from core.sessions.content import ImageContent, ToolCallContent, ToolResultContent
from core.tools.outcome import ToolOutcome
from tui import keymap
from tui.widgets._context import ViewContext
from tui.widgets._text import clean, clip_lines, human_count, one_line, plain
from tui.widgets.image_view import ImageView

if TYPE_CHECKING:
    from core.chat.results import ToolActivity

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


def json_content(text: str) -> Content:
    """Cleaned JSON text, syntax-highlighted (never parsed as markup)."""
    if not text:
        return Content("")
    try:
        return highlight(clean(text), language="json")
    except Exception:  # a highlighter failure must not hide the arguments
        return plain(text)


def format_seconds(seconds: float, *, whole: bool = False) -> str:
    """``0.4 s``, ``12 s``, ``3 m 05 s`` (``whole``: ``4 s``, for a ticking time)."""
    if seconds < 10 and not whole:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} m {rest:02d} s"


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
        &.-denied {
            border: round $warning 70%;
            border-title-color: $text-warning;
        }
        &.-running {
            border-title-color: $text-accent;
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

    BINDINGS = keymap.bindings_of("chat_toggle_tool")

    expanded: reactive[bool] = reactive(False)
    """Are the full arguments and result shown?"""

    def __init__(
        self,
        call: ToolCallContent | None = None,
        result: ToolResultContent | None = None,
        context: ViewContext | None = None,
        *,
        outcome: ToolOutcome | None = None,
        live: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """
        Args:
            call: The call (``None`` for a result whose call is not on the path).
            result: Its result, if there is one yet.
            outcome: How the call ended, as saved with the result.
            live: The call is still being streamed.
        """
        super().__init__(id=id, classes=classes)
        self.context = context or ViewContext()
        self.call_id = call.id if call is not None else (result.tool_call_id if result else "")
        self.tool_name = call.name if call is not None else ""
        self._arguments_text = format_arguments(call.arguments, call.raw_arguments) if call else ""
        self.result = result
        self.live = live
        self.state: str | None = outcome.state if outcome is not None else None
        """pending, running, done, error or denied; None when not known (a result saved without it)."""
        self.seconds: float | None = outcome.seconds if outcome is not None else None
        """How long the call ran, once it ended."""
        self._started_at: float | None = None
        self._asking = False
        """Waiting for the user's approval (else, while pending, for its turn)."""
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

    def show_activity(self, activity: ToolActivity) -> None:
        """Follow a call the agent loop is running: its state, time and result."""
        self.call_id = activity.call.id
        if self.live or not self._arguments_text:
            self.finish_call(activity.call)
        self.state = activity.state
        self._asking = activity.state == "pending" and activity.preview is not None
        self._started_at = activity.started_at if activity.state == "running" else None
        if activity.finished:
            self.seconds = activity.elapsed
            self.result = activity.result
        self._refresh_content()

    @property
    def running(self) -> bool:
        return self.state == "running"

    def tick(self) -> None:
        """Update a running card's time."""
        if self.running:
            self.border_title = self._title(False)

    async def set_result(
        self, result: ToolResultContent, outcome: ToolOutcome | None = None
    ) -> None:
        """Show the call's result (and any images in it), and how the call ended."""
        self.result = result
        if outcome is not None:
            self.state, self.seconds = outcome.state, outcome.seconds
        elif self.state not in ("done", "error", "denied"):
            self.state = None
        self._started_at = None
        self._refresh_content()
        images = [block for block in result.content if isinstance(block, ImageContent)]
        if images and self.is_mounted:
            await self.query(ImageView).remove()
            await self.mount_all([ImageView(image, self.context) for image in images])

    def watch_expanded(self) -> None:
        if self.is_mounted:
            self._refresh_content()

    def action_expand_or_collapse(self) -> None:
        self.expanded = not self.expanded

    async def _on_click(self, event: events.Click) -> None:
        event.stop()
        self.action_expand_or_collapse()

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
        denied = self.state == "denied"
        self.set_class(is_error and not denied, "-error")
        self.set_class(denied, "-denied")
        self.set_class(self.running, "-running")
        self.border_title = self._title(is_error)

        hidden = 0
        arguments = self.arguments_text[:MAX_CHARS]
        if not self.expanded:
            arguments, clipped = clip_lines(arguments, ARGUMENT_LINES)
            hidden += clipped
        self._args.display = bool(arguments)
        self._args.update(json_content(arguments))

        text = self.result_text[:MAX_CHARS]
        if (
            result is not None
            and not text
            and not any(isinstance(block, ImageContent) for block in result.content)
        ):
            text = "(no output)"
        if not self.expanded:
            text, clipped = clip_lines(text, RESULT_LINES)
            hidden += clipped
        self._result.display = bool(text)
        self._result.set_class(is_error and not denied, "-error")
        self._result.update(Content(text))

        toggle = keymap.key_in(self, "chat_toggle_tool")
        if hidden:
            more = f"… {human_count(hidden)} more lines · {toggle} to expand"
        elif self.expanded and self._is_long():
            more = f"{toggle} to collapse"
        else:
            more = ""
        self._more.display = bool(more)
        self._more.update(Content(more))

    def _is_long(self) -> bool:
        return (
            self.arguments_text.count("\n") >= ARGUMENT_LINES
            or self.result_text.count("\n") >= RESULT_LINES
        )

    def _title(self, is_error: bool) -> Content:
        name = one_line(self.tool_name, 80) or "tool"
        return Content.assemble(("⚙ ", "dim"), (name, "bold"), self._status(is_error))

    def _status(self, is_error: bool) -> str:
        state = self.state
        if self.live:
            return " …"
        if state == "pending":
            return " · waiting for approval" if self._asking else " · waiting"
        if state == "running":
            started = self._started_at if self._started_at is not None else time.monotonic()
            return f" · running {format_seconds(time.monotonic() - started, whole=True)}"
        took = f" · {format_seconds(self.seconds)}" if self.seconds is not None else ""
        if state == "denied":
            return " ⊘ denied"
        if self.result is None:
            return ""
        if is_error or state == "error":
            return f" ✗ error{took}"
        return f" ✓{took}"
