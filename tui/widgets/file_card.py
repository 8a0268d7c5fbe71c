"""One line in the transcript for an attached file other than an image."""

from __future__ import annotations

from textual.widgets import Static

from core.sessions.content import FileContent
from tui.widgets._text import one_line, plain


class FileCard(Static):
    """The file's kind, name, type and size (its name is untrusted text)."""

    DEFAULT_CSS = """
    FileCard {
        height: 1;
        color: $text-muted;
    }
    """

    def __init__(self, block: FileContent) -> None:
        icon = "🔊" if block.media_type.startswith("audio/") else "📄"
        super().__init__(plain(f"{icon} {one_line(block.describe())}"), markup=False)
        self.block = block
