"""A message the user sent: its text and images."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from core.content import ImageContent, TextContent
from core.messages import Message
from tui.widgets._text import clean, plain
from tui.widgets.image_view import ImageView
from tui.widgets.message_widget import MessageWidget


class UserMessage(MessageWidget):
    """The user's text, shown literally (not as Markdown), and any images."""

    DEFAULT_CSS = """
    UserMessage {
        background: $primary 12%;
        padding: 0 1 0 1;
        & > .user-text {
            width: 1fr;
        }
        & > ImageView {
            margin: 1 0 0 0;
        }
    }
    """

    @property
    def text(self) -> str:
        """The (cleaned) text shown."""
        message = self.entry.payload if self.entry is not None else None
        if not isinstance(message, Message):
            return ""
        return clean("\n".join(b.text for b in message.content if isinstance(b, TextContent)))

    def compose(self) -> ComposeResult:
        message = self.entry.payload if self.entry is not None else None
        if not isinstance(message, Message):
            return
        text = self.text
        if text:
            yield Static(plain(text), markup=False, classes="user-text")
        for block in message.content:
            if isinstance(block, ImageContent):
                yield ImageView(block, self.context)
