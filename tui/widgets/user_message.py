"""A message the user sent: its text, images and files."""

from __future__ import annotations

from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.widgets import Static

from core.sessions.content import FileContent, ImageContent, TextContent
from core.sessions.entries import Entry
from core.sessions.messages import Message
from tui.widgets._bounded import bounded
from tui.widgets._text import clean, plain
from tui.widgets.file_card import FileCard
from tui.widgets.image_view import ImageView
from tui.widgets.message_widget import MessageWidget


class UserMessage(MessageWidget):
    """The user's text, shown literally (not as Markdown), any images, and a
    one-line card for each other file.

    A message of text alone (nearly every one) is one widget, which paints its
    text itself: each widget a row has costs in every layout pass and every
    exchange mounts one of these. Images, and the bar of alternatives above an
    edited message, are children: the text is then a child line of its own,
    below the bar and above the images."""

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
        """The (cleaned) text shown: the head of a huge message (widgets/_bounded.py)."""
        return self._shown[0]

    _shown_for: tuple[Entry | None, tuple[str, str | None]] | None = None

    @property
    def _shown(self) -> tuple[str, str | None]:
        """The cleaned text shown and the note of what it leaves out, if anything
        (worked out once per entry: a huge message is joined and cut once)."""
        entry = self.entry
        if self._shown_for is None or self._shown_for[0] is not entry:
            message = entry.payload if entry is not None else None
            shown: tuple[str, str | None] = ("", None)
            if isinstance(message, Message):
                texts = (b.text for b in message.content if isinstance(b, TextContent))
                text, note = bounded("\n".join(texts))
                shown = (clean(text), note)
            self._shown_for = (entry, shown)
        return self._shown_for[1]

    def _content(self) -> Content:
        """The text, then the note of what is not shown in its own style."""
        text, note = self._shown
        if note is None:
            return plain(text)
        return plain(text) + Content("\n") + plain(note, "italic dim")

    def compose(self) -> ComposeResult:
        message = self.entry.payload if self.entry is not None else None
        if not isinstance(message, Message):
            return
        images = [block for block in message.content if isinstance(block, ImageContent)]
        files = [block for block in message.content if isinstance(block, FileContent)]
        if (images or files) and self.text:
            yield self._text_line()
        for block in images:
            yield ImageView(block, self.context)
        for file in files:
            yield FileCard(file, self.context)

    def render(self) -> RenderResult:
        return "" if self.children else self._content()

    def _children_coming(self) -> None:
        if not self.children and self.text:
            self.mount(self._text_line())
            self.refresh()

    def _text_line(self) -> Static:
        return Static(self._content(), markup=False, classes="user-text")
