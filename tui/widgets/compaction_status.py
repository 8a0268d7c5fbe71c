"""The line under the chat while the conversation is being compacted, and the
messages typed meanwhile, which wait there (queued) until it is over."""

from __future__ import annotations

from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from tui.widgets._text import one_line


class CompactionStatus(Widget):
    DEFAULT_CSS = """
    CompactionStatus {
        height: auto;
        padding: 0 1;
        display: none;
        &.-active {
            display: block;
        }
    }
    """

    progress: reactive[str] = reactive("", layout=True)
    """``Compacting… Esc to cancel`` while a compaction runs; empty otherwise."""
    queued: reactive[tuple[str, ...]] = reactive((), layout=True)
    """Messages waiting to be sent, oldest first."""

    def _refresh_active(self) -> None:
        self.set_class(bool(self.progress or self.queued), "-active")

    def watch_progress(self) -> None:
        self._refresh_active()

    def watch_queued(self) -> None:
        self._refresh_active()

    def render(self) -> RenderResult:
        lines: list[Content] = []
        if self.progress:
            lines.append(Content.styled(self.progress, "bold $text-warning"))
        for text in self.queued:
            lines.append(
                Content.assemble(
                    ("queued ", "bold $text-accent"), (one_line(text, 300), "$text-muted")
                )
            )
        return Content("\n").join(lines)
