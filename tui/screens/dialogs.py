"""Small modal questions: a line of text (rename) and yes/no (delete).

Their text is given as plain strings and shown as ``Content``, never markup.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from core.sanitize import strip_control
from tui import keymap

CSS = """
TextPrompt, Confirm {
    align: center middle;
    background: $background 60%;
}
.dialog-body {
    width: 70;
    max-width: 90%;
    height: auto;
    border: round $primary;
    border-title-style: bold;
    background: $surface;
    padding: 0 1;
}
"""


class TextPrompt(ModalScreen[str | None]):
    """Asks for one line; dismisses with it (Enter) or None (Esc)."""

    DEFAULT_CSS = CSS
    BINDINGS = keymap.bindings("dialog")

    def __init__(self, title: str, value: str = "", *, placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-body") as body:
            body.border_title = strip_control(self.title_text)
            cancel = keymap.key_in(self, "close")
            body.border_subtitle = f"enter to save · {cancel} to cancel"  # Enter: the Input's own
            yield Input(strip_control(self.value), placeholder=self.placeholder, id="prompt-value")

    @on(Input.Submitted, "#prompt-value")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_close(self) -> None:
        self.dismiss(None)


class Confirm(ModalScreen[bool]):
    """A yes/no question; ``y`` says yes, ``n`` or Esc no."""

    DEFAULT_CSS = CSS
    BINDINGS = keymap.bindings("confirm")

    def __init__(self, title: str, question: str) -> None:
        super().__init__()
        self.title_text = title
        self.question = question

    def compose(self) -> ComposeResult:
        yes, no = keymap.key_in(self, "confirm_yes"), keymap.key_in(self, "confirm_no")
        with Vertical(classes="dialog-body") as body:
            body.border_title = strip_control(self.title_text)
            body.border_subtitle = f"{yes}: yes · {no}: no"
            yield Static(Content(strip_control(self.question)), id="confirm-question")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
