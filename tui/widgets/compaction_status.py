"""The line under the chat while the conversation is being compacted, and the
messages typed meanwhile, which wait there (queued) until it is over."""

from __future__ import annotations

from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget

from tui.widgets._text import one_line

QUEUED_SHOWN_AFTER = 0.15
"""Seconds a message waits before the line shows it. A message sent as a reply
ends (its text is on screen, it is still being saved) goes within a few frames:
showing the line, one row taken from the chat, and taking it away again would
move the whole chat twice for nothing. While a compaction shows, at once."""


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

    # Not layout reactives: a change lays out the screen only if the line shows
    # (``_show``), not while it is hidden.
    progress: reactive[str] = reactive("")
    """``Compacting… Esc to cancel`` while a compaction runs; empty otherwise."""
    queued: reactive[tuple[str, ...]] = reactive(())
    """Messages waiting to be sent, oldest first."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._queued_shown = False
        self._queued_timer: Timer | None = None

    def watch_progress(self, progress: str) -> None:
        if progress and self.queued:
            self._queued_shown = True
        self._show()

    def watch_queued(self, queued: tuple[str, ...]) -> None:
        if not queued:
            self._queued_shown = False
            if self._queued_timer is not None:
                self._queued_timer.stop()
                self._queued_timer = None
        elif self.progress:
            self._queued_shown = True
        elif not self._queued_shown and self._queued_timer is None:
            self._queued_timer = self.set_timer(QUEUED_SHOWN_AFTER, self._queued_due)
        self._show()

    def _queued_due(self) -> None:
        self._queued_timer = None
        self._queued_shown = True
        self._show()

    def _show(self) -> None:
        active = bool(self.progress) or (bool(self.queued) and self._queued_shown)
        if active != self.has_class("-active"):
            self.set_class(active, "-active")  # restyled: shown or hidden, laid out
        elif active:
            self.refresh(layout=True)  # its number of lines may change

    def render(self) -> RenderResult:
        lines: list[Content] = []
        if self.progress:
            lines.append(Content.styled(self.progress, "bold $text-warning"))
        for text in self.queued if self._queued_shown else ():
            lines.append(
                Content.assemble(
                    ("queued ", "bold $text-accent"), (one_line(text, 300), "$text-muted")
                )
            )
        return Content("\n").join(lines)
