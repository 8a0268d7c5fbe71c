"""``/info``: the overview of the open session (the same as ``tangents
sessions show``) in a dialog. Session text is shown as plain ``Content``,
sanitised, never markup."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from core.formats.overview import Overview, overview_text
from core.sanitize import strip_control
from tui import keymap


class InfoScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    InfoScreen {
        align: center middle;
        background: $background 60%;
    }
    #info-body {
        width: 90%;
        max-width: 120;
        height: auto;
        max-height: 90%;
        border: round $primary;
        border-title-style: bold;
        padding: 0 1;
        background: $surface;
    }
    #info-text {
        width: 1fr;
    }
    """
    BINDINGS = keymap.bindings("dialog")

    def __init__(self, overview: Overview) -> None:
        super().__init__()
        self.overview = overview

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="info-body") as body:
            body.border_title = "This session"
            body.border_subtitle = f"{keymap.key_in(self, 'close')} to close"
            yield Static(Content(strip_control(overview_text(self.overview))), id="info-text")

    def action_close(self) -> None:
        self.dismiss()
