"""The tool approval dialog: what a tool call would do, and the user's answer.

Shows the tool, what it will do (for ``write_file`` the diff against the
file as it is now, coloured by line) and its full arguments, all cleaned of
control sequences and shown as plain text. Allow once, allow the tool for the
session, or deny (with an optional message the model reads); Esc denies.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from textual import events
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, Static

from core.sanitize import strip_control
from core.sessions.content import ToolCallContent
from core.tools.base import Approval, Tool
from tui import keymap
from tui.widgets.tool_call_card import json_content

DIFF_STYLES = (
    ("+++", "bold"),
    ("---", "bold"),
    ("@@", "cyan"),
    ("+", "green"),
    ("-", "red"),
    ("\\", "dim"),
)
"""Style of a diff line by its start (first match wins)."""

QUIET_SECONDS = 0.35
"""A dialog that opens while the user is typing a message takes no answer
until no key has come for this long: until then the keys go on into the
message (a letter of a word must not allow a tool)."""


def diff_content(diff: str) -> Content:
    """A unified diff, each line styled by its kind; the text is never parsed as markup."""
    parts: list[tuple[str, str] | str] = []
    for line in strip_control(diff).splitlines(keepends=True):
        style = next((style for start, style in DIFF_STYLES if line.startswith(start)), "")
        parts.append((line, style) if style else line)
    return Content.assemble(*parts)


def arguments_json(call: ToolCallContent) -> str:
    """The call's arguments as pretty JSON (the raw text when it is not JSON)."""
    arguments = call.arguments
    if call.raw_arguments.strip():
        try:
            arguments = json.loads(call.raw_arguments)
        except ValueError:
            return call.raw_arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False)


class ApprovalScreen(ModalScreen[Approval]):
    CSS_PATH = "approval.tcss"
    BINDINGS = keymap.bindings("approval")
    AUTO_FOCUS = "#approval-scroll"

    def __init__(
        self,
        call: ToolCallContent,
        tool: Tool,
        preview: str,
        overrides: Mapping[str, str],
        pass_typing: Callable[[events.Key | events.Paste], None],
        *,
        typing: bool = False,
    ) -> None:
        """``pass_typing`` types a key or paste into the message being written;
        ``typing``: the user was typing it as this opened (keys go on into
        it until they pause, :data:`QUIET_SECONDS`)."""
        super().__init__()
        self.call = call
        self.tool = tool
        self.preview = preview
        self.overrides = overrides
        self._pass_typing = pass_typing
        self.takes_answers = not typing
        """Do keys answer the dialog? Not while the user goes on typing a message."""
        self._answered = False
        self._quiet: Timer | None = None

    def _key(self, action_id: str) -> str:
        return keymap.first_key(action_id, self.overrides)

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-body") as body:
            body.border_title = Content.assemble(
                "Allow ", (strip_control(self.tool.name), "bold"), "?"
            )
            body.border_subtitle = (
                self._hints()
                if self.takes_answers
                else Content("typing goes on into your message…")
            )
            source = (
                "" if self.tool.source == "builtin" else f" ({strip_control(self.tool.source)})"
            )
            yield Static(
                Content(f"The model wants to run {strip_control(self.tool.name)}{source}."),
                id="approval-what",
            )
            with VerticalScroll(id="approval-scroll"):
                if self.tool.wire_name == "write_file":
                    yield Static(diff_content(self.preview), id="approval-preview", classes="-diff")
                else:
                    yield Static(Content(strip_control(self.preview)), id="approval-preview")
                yield Static(Content("Arguments"), classes="approval-heading")
                yield Static(json_content(arguments_json(self.call)), id="approval-arguments")
            message = Input(
                placeholder=f"Optional message to the model; {self._key('approve_send_denial')}"
                " denies the call",
                id="approval-message",
            )
            message.display = False
            yield message

    def on_mount(self) -> None:
        if not self.takes_answers:
            self._quiet = self.set_timer(QUIET_SECONDS, self._take_answers)

    def _take_answers(self) -> None:
        self.takes_answers = True
        self.query_one("#approval-body").border_subtitle = self._hints()

    async def on_key(self, event: events.Key) -> None:
        """The dialog's keys are run here, as each key reaches the dialog in
        turn, not as it bubbles on to the app: the keys of a burst (fast typing,
        tmux) are all read before the first is answered, and those after the
        answer are the user's typing, as are those typed on as it opened."""
        if self._passes_typing():
            event.prevent_default()
            event.stop()
            self._pass_typing(event)
            return
        message = self.query_one("#approval-message", Input)
        if message.display and (event.is_printable or event.key == "backspace"):
            # Typed on after the deny key, before the message took the focus.
            event.prevent_default()
            event.stop()
            if event.character and event.is_printable:
                message.insert_text_at_cursor(event.character)
            else:
                message.action_delete_left()
            return
        await keymap.run_own_binding(self, event)

    def on_paste(self, event: events.Paste) -> None:
        if self._passes_typing():
            event.stop()
            self._pass_typing(event)

    def _passes_typing(self) -> bool:
        """Does a key or paste go on into the message rather than answer? So it
        does while the user goes on typing as the dialog opened (each key
        keeps the dialog quiet a while longer), and once it is answered."""
        if self._answered:
            return True
        if self.takes_answers:
            return False
        if self._quiet is not None:
            self._quiet.reset()
        return True

    def dismiss(self, result: Approval | None = None) -> AwaitComplete:
        self._answered = True
        return super().dismiss(result)

    def _hints(self) -> Content:
        # Short enough to be whole in the dialog at 80 columns.
        return Content(
            f"{self._key('approve_once')} allow once · {self._key('approve_session')} this session"
            f" · {self._key('approve_deny')} deny · {self._key('approve_dismiss')} deny silently"
        )

    def action_allow_once(self) -> None:
        self.dismiss(Approval("once"))

    def action_allow_session(self) -> None:
        self.dismiss(Approval("session"))

    def action_deny(self) -> None:
        message = self.query_one("#approval-message", Input)
        message.display = True
        message.focus()

    def action_dismiss_denied(self) -> None:
        self.dismiss(Approval("deny"))

    def action_send_denial(self) -> None:
        """Sent only once its message is being written; before that the key does
        what it would do without this binding."""
        message = self.query_one("#approval-message", Input)
        if not message.display:
            raise SkipAction()
        self.dismiss(Approval("deny", message.value.strip() or None))
