"""Two small dialogs of branching: a yes/no question and a label input."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from core.sanitize import strip_control
from tui import keymap

DIALOG_CSS = """
ConfirmDialog, LabelDialog {
    align: center middle;
    background: $background 60%;
}
#dialog-body {
    width: 64;
    height: auto;
    border: round $primary;
    border-title-style: bold;
    background: $surface;
    padding: 0 1;
}
#dialog-hint {
    color: $text-muted;
}
"""


class ConfirmDialog(ModalScreen[bool]):
    """A question answered with y (True) or n / Esc (False)."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = keymap.bindings("confirm")

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-body"):
            yield Static(Content(strip_control(self.question)), id="dialog-question")
            if self.detail:
                yield Static(Content(strip_control(self.detail)), id="dialog-detail")
            yes, no = keymap.first_key("confirm_yes"), keymap.first_key("confirm_no")
            yield Static(Content(f"{yes}: yes · {no} or esc: no"), id="dialog-hint")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class LabelDialog(ModalScreen[str | None]):
    """The label of an entry: Enter saves what is typed (empty removes it), Esc cancels (None)."""

    DEFAULT_CSS = DIALOG_CSS
    BINDINGS = keymap.bindings("dialog")

    def __init__(self, current: str | None, about: str) -> None:
        super().__init__()
        self.current = current or ""
        self.about = about

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-body") as body:
            body.border_title = "Label"
            yield Static(Content(strip_control(self.about)), id="dialog-question")
            yield Input(self.current, placeholder="a short name for this point", id="label-input")
            yield Static(Content("enter: save (empty removes the label) · esc: cancel"), id="dialog-hint")

    @on(Input.Submitted, "#label-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(" ".join(strip_control(event.value).split()))

    def action_close(self) -> None:
        self.dismiss(None)
