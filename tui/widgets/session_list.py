"""The picker's list of sessions: two lines a session, drawn with the line API
so only the visible rows are rendered (1,000 sessions cost what 20 do)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from core.sessions.persistence import SessionMatch
from tui.widgets.session_rows import counts, detail_line, one_line, title_line

ROW_HEIGHT = 2


def utc_now() -> datetime:
    return datetime.now(UTC)


class SessionList(ScrollView, can_focus=False):
    COMPONENT_CLASSES = {
        "session-list--cursor",
        "session-list--match",
        "session-list--dim",
        "session-list--current",
    }
    DEFAULT_CSS = """
    SessionList { background: $surface; }
    SessionList > .session-list--cursor { background: $primary 40%; }
    SessionList > .session-list--match { color: $warning; text-style: bold underline; }
    SessionList > .session-list--dim { color: $text-muted; }
    SessionList > .session-list--current { color: $success; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    class Chosen(Message):
        """A double click on a row."""

        def __init__(self, match: SessionMatch) -> None:
            super().__init__()
            self.match = match

    def __init__(
        self,
        *,
        current_id: str | None,
        now: Callable[[], datetime] = utc_now,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.rows: list[SessionMatch] = []
        self.current_id = current_id
        self.now = now
        self._drawn_at = now()

    def set_rows(self, rows: list[SessionMatch], select: str | None = None) -> None:
        """Show ``rows``, keeping the cursor on session ``select``; when it is gone
        (archived, deleted, filtered out), on its nearest neighbour that is still
        there (the rows after it first), never back at the top."""
        order = [row.summary.info.id for row in self.rows]
        if select in order:
            at = order.index(select)
            wanted = [select, *order[at + 1 :], *reversed(order[:at])]
        else:
            wanted = [select] if select is not None else []
        ids = {row.summary.info.id: i for i, row in enumerate(rows)}
        index = next((ids[i] for i in wanted if i in ids), 0)
        self.rows = rows
        self._drawn_at = self.now()
        self.virtual_size = Size(self.size.width, len(rows) * ROW_HEIGHT)
        self.scroll_to(y=0, animate=False, immediate=True)
        self.cursor = index
        self.refresh()

    @property
    def highlighted(self) -> SessionMatch | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows) * ROW_HEIGHT)

    def watch_cursor(self, old: int, new: int) -> None:
        if not self.rows:
            return
        for index in (old, new):
            y = index * ROW_HEIGHT - self.scroll_offset.y
            self.refresh(Region(0, y, self.size.width, ROW_HEIGHT))
        self.scroll_to_region(
            Region(0, new * ROW_HEIGHT, 1, ROW_HEIGHT), animate=False, force=True, immediate=True
        )

    def move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def render_line(self, y: int) -> Strip:
        line = y + self.scroll_offset.y
        index, part = divmod(line, ROW_HEIGHT)
        width = self.scrollable_content_region.width  # the scrollbar's columns left out
        base = self.rich_style
        if index >= len(self.rows):
            return Strip([Segment(" " * width, base)], width)
        text = self._line(self.rows[index], part, width)
        if index == self.cursor:
            text.stylize(self.get_component_rich_style("session-list--cursor", partial=True))
        return Strip(text.render(self.app.console)).apply_style(base).crop(0, width)

    def _line(self, row: SessionMatch, part: int, width: int) -> Text:
        style = self.get_component_rich_style
        match, dim = (
            style("session-list--match", partial=True),
            style("session-list--dim", partial=True),
        )
        info = row.summary.info
        if part == 0:
            marker = "● " if info.id == self.current_id else "  "
            left = Text(no_wrap=True, end="")
            left.append(marker, style("session-list--current", partial=True))
            left.append_text(title_line(row, match))
            right = Text(counts(row, self._drawn_at), dim)
        else:
            left = Text("  ", no_wrap=True, end="")
            left.append_text(detail_line(row, match))
            left.stylize(dim, 2)
            tags = (
                ("archived · " if info.archived else "")
                + ("" if info.active else f"{info.status} · ")
                + one_line(row.summary.model or "")
            )
            right = Text(tags, dim)
        return _fit(left, right, width)

    async def _on_click(self, event: events.Click) -> None:
        index = (event.y + self.scroll_offset.y) // ROW_HEIGHT
        if 0 <= index < len(self.rows):
            self.cursor = index
            if event.chain >= 2:
                self.post_message(self.Chosen(self.rows[index]))


def _fit(left: Text, right: Text, width: int) -> Text:
    """``left`` cut to leave room for ``right``, which is right-aligned."""
    room = max(0, width - right.cell_len - 2)
    left.truncate(room, overflow="ellipsis", pad=True)
    line = Text(no_wrap=True, end="")
    line.append_text(left)
    line.append("  ")
    line.append_text(right)
    line.truncate(width, overflow="ellipsis", pad=True)
    return line
