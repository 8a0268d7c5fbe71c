"""One line in the transcript for an attached file other than an image;
Enter opens it with the system's opener."""

from __future__ import annotations

import asyncio

from textual import work
from textual.widgets import Static

from core.sessions.content import FileContent
from tui import keymap
from tui.widgets._context import ViewContext
from tui.widgets._open_file import OpenError, open_file
from tui.widgets._text import one_line, plain


class FileCard(Static, can_focus=True):
    """The file's kind, name, type, size, and duration or pages (its name is
    untrusted text)."""

    DEFAULT_CSS = """
    FileCard {
        height: 1;
        color: $text-muted;
        &:focus {
            color: $text;
            background: $boost;
        }
    }
    """

    BINDINGS = keymap.bindings_of("chat_open_file")

    def __init__(self, block: FileContent, context: ViewContext | None = None) -> None:
        icon = "🔊" if block.media_type.startswith("audio/") else "📄"
        super().__init__(plain(f"{icon} {one_line(block.describe())}"), markup=False)
        self.block = block
        self.context = context or ViewContext()

    def action_open(self) -> None:
        self._open()

    @work(group="open-file", exit_on_error=False)
    async def _open(self) -> None:
        """Load the bytes, write them to a temporary file and run the opener on
        it (in a thread); a failure is one notification."""
        name = one_line(self.block.name)
        loader = self.context.blob_loader
        blob = await loader(self.block.sha256) if loader is not None else None
        if blob is None:
            self.notify(f"{name}: its bytes are not in the database", severity="error")
            return
        try:
            await asyncio.to_thread(
                open_file, blob.data, self.block.name, blob.media_type, self.context.opener
            )
        except (OpenError, OSError) as error:
            self.notify(f"Could not open {name}: {one_line(str(error))}", severity="error")
