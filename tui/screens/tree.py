"""The session tree: every entry of a session, to jump anywhere in it.

One cheap widget draws the rows (:class:`TreeView`, a ScrollView on the line
API): only the visible lines are rendered, so a 10,000-entry session opens as
fast as a short one. Rows come from :meth:`core.branching.tree.SessionTree.rows`; the
current path is marked, labels shown, long linear runs folded (Enter on a fold
row unfolds it). Typing filters by text; ``tab``/``ctrl+f`` cycles all / user
messages / labelled. Enter dismisses with the chosen entry id, Esc with None.
All entry text is shown as ``Text``, never parsed as markup.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from core.branching.tree import ROW_FILTERS, RowFilter, SessionTree, TreeRow
from core.sessions.ids import short_id
from tui import keymap

FILTER_NAMES: dict[str, str] = {
    "all": "all entries",
    "user": "user messages",
    "labelled": "labelled",
}
_KIND_TAGS: dict[str, str] = {
    "user": "user",
    "assistant": "asst",
    "system": "sys",
    "tool_result": "tool",
    "custom": "note",
    "compaction": "compact",
    "branch_summary": "summary",
    "model_change": "model",
    "note": "pin",
}


class TreeView(ScrollView, can_focus=True):
    """A list of :class:`TreeRow` drawn one line each, only the visible ones."""

    COMPONENT_CLASSES = {
        "tree-view--cursor",
        "tree-view--current",
        "tree-view--guide",
        "tree-view--label",
        "tree-view--user",
        "tree-view--other",
        "tree-view--fold",
        "tree-view--mark",
    }
    DEFAULT_CSS = """
    TreeView { background: $surface; }
    TreeView > .tree-view--cursor { background: $primary 45%; text-style: bold; }
    TreeView > .tree-view--current { color: $success; }
    TreeView > .tree-view--guide { color: $text-muted; }
    TreeView > .tree-view--label { color: $warning; text-style: bold; }
    TreeView > .tree-view--user { color: $text; }
    TreeView > .tree-view--other { color: $text-muted; }
    TreeView > .tree-view--fold { color: $text-muted; text-style: italic; }
    TreeView > .tree-view--mark { color: $accent; text-style: bold; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    class Chosen(Message):
        """Enter or a click on a row."""

        def __init__(self, row: TreeRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[TreeRow] = []
        self.marked: set[str] = set()
        """Entries marked to compare."""

    def set_rows(self, rows: list[TreeRow], cursor: int = 0) -> None:
        self.rows = rows
        self.virtual_size = Size(self.size.width, len(rows))
        self.cursor = max(0, min(cursor, len(rows) - 1))
        self.refresh()

    @property
    def current_row(self) -> TreeRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))

    def watch_cursor(self, old: int, new: int) -> None:
        if not self.rows:
            return
        self.refresh_line(old)
        self.refresh_line(new)
        self.scroll_to_region(Region(0, new, 1, 1), animate=False, force=True, immediate=True)

    def center_cursor(self) -> None:
        self.scroll_to_region(
            Region(0, self.cursor, 1, 1), animate=False, force=True, center=True, immediate=True
        )

    def refresh_line(self, index: int) -> None:
        y = index - self.scroll_offset.y
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def move(self, delta: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + delta))

    def go(self, index: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, index))

    def render_line(self, y: int) -> Strip:
        index = y + self.scroll_offset.y
        width = self.size.width
        base = self.rich_style
        if index >= len(self.rows):
            return Strip([Segment(" " * width, base)], width)
        text = self._line(self.rows[index])
        text.truncate(width, overflow="ellipsis", pad=True)
        if index == self.cursor:
            text.stylize(self.get_component_rich_style("tree-view--cursor", partial=True))
        return Strip(text.render(self.app.console)).apply_style(base).crop(0, width)

    def _line(self, row: TreeRow) -> Text:
        style = self.get_component_rich_style
        text = Text(no_wrap=True, end="")
        text.append(row.prefix, style("tree-view--guide", partial=True))
        marker = "● " if row.is_leaf else ("• " if row.on_current_path else "  ")
        current = style("tree-view--current", partial=True)
        text.append(marker, current if row.on_current_path else Style())
        if row.entry_id in self.marked and not row.is_fold:
            text.append("◆ ", style("tree-view--mark", partial=True))
        if row.is_fold:
            text.append(f"… {row.folded} more", style("tree-view--fold", partial=True))
            return text
        tag = _KIND_TAGS.get(row.kind, row.kind)
        kind_style = style(
            "tree-view--user" if row.kind == "user" else "tree-view--other", partial=True
        )
        text.append(f"{tag}: ", kind_style + Style(bold=row.kind == "user"))
        text.append(row.preview, current if row.on_current_path else kind_style)
        if row.label:
            text.append(f"  [{row.label}]", style("tree-view--label", partial=True))
        # The id --from and the sessions commands take.
        text.append(f"  {short_id(row.entry_id)}", style("tree-view--guide", partial=True))
        return text

    async def _on_click(self, event: events.Click) -> None:
        index = event.y + self.scroll_offset.y
        if 0 <= index < len(self.rows):
            self.cursor = index
            if event.chain >= 2:
                self.post_message(self.Chosen(self.rows[index]))


class TreeScreen(ModalScreen[str | None]):
    """Dismisses with the chosen entry id, or None."""

    CSS_PATH = "tree.tcss"
    BINDINGS = keymap.bindings("tree")

    def __init__(self, tree: SessionTree, *, filter: RowFilter = "all") -> None:
        super().__init__()
        self.session_tree = tree
        self.row_filter: RowFilter = filter
        self.expanded: set[str] = set()

    def _key(self, action_id: str) -> str:
        """The key the hint names: the keymap's, the config's remaps applied."""
        return keymap.key_in(self, action_id)

    def compose(self) -> ComposeResult:
        with Vertical(id="tree-body") as body:
            body.border_title = "Session tree"
            body.border_subtitle = " · ".join(
                f"{self._key(action)}: {what}"
                for action, what in (
                    ("tree_choose", "go"),
                    ("tree_filter", "filter"),
                    ("tree_mark", "mark to compare"),
                    ("tree_close", "close"),
                )
            )
            yield Input(placeholder="type to filter by text or label", id="tree-search")
            yield TreeView(id="tree-view")
            yield Static("", id="tree-status")

    def on_mount(self) -> None:
        self._show(select=self.session_tree.leaf_id)
        # Before the first layout the view has no height to scroll in: once it
        # has, bring the current entry into the middle of it.
        self.call_after_refresh(self.tree_view.center_cursor)

    @property
    def tree_view(self) -> TreeView:
        return self.query_one("#tree-view", TreeView)

    @property
    def query_text(self) -> str:
        return self.query_one("#tree-search", Input).value

    def _show(self, select: str | None = None) -> None:
        rows = self.session_tree.rows(self.row_filter, self.query_text, expanded=self.expanded)
        view = self.tree_view
        if select is None and view.current_row is not None:
            select = view.current_row.entry_id
        index = 0
        if select is not None:
            index = next((i for i, row in enumerate(rows) if row.entry_id == select), -1)
            if index < 0:  # the selection was filtered out: the nearest row on the current path
                index = next(
                    (i for i in range(len(rows) - 1, -1, -1) if rows[i].on_current_path), 0
                )
        view.set_rows(rows, index)
        status = Text(
            f"{len(rows)} rows · {len(self.session_tree)} entries · filter: {FILTER_NAMES[self.row_filter]}"
        )
        if self.query_text.strip():
            status.append(" · matching “")
            status.append(self.query_text.strip())
            status.append("”")
        self.query_one("#tree-status", Static).update(status)

    @on(Input.Changed, "#tree-search")
    def _search_changed(self) -> None:
        self._show()

    @on(Input.Submitted, "#tree-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_choose()

    @on(TreeView.Chosen)
    def _chosen(self, event: TreeView.Chosen) -> None:
        self._choose(event.row)

    def action_choose(self) -> None:
        row = self.tree_view.current_row
        if row is not None:
            self._choose(row)

    def _choose(self, row: TreeRow) -> None:
        if row.is_fold:
            self.expanded.add(row.entry_id)
            self._show(select=row.entry_id)
            return
        self.dismiss(row.entry_id)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_mark(self) -> None:
        """Mark (or unmark) the selected entry; the second mark opens the comparison."""
        row = self.tree_view.current_row
        if row is None or row.is_fold:
            return
        marked = self.tree_view.marked
        if row.entry_id in marked:
            marked.discard(row.entry_id)
        else:
            marked.add(row.entry_id)
        self.tree_view.refresh()
        if len(marked) == 2 and not self._compare(
            *sorted(marked, key=lambda i: self.session_tree.entry(i).created_at)
        ):
            marked.discard(row.entry_id)  # this mark cannot be compared with the first
            self.tree_view.refresh()

    def _compare(self, first: str, second: str) -> bool:
        """Open the two marked branches side by side; False (and why) when they cannot be."""
        from core.branching.comparison import ComparisonError, anchor_text, of_branches
        from tui.screens.compare import CompareScreen, Kept

        try:
            comparison = of_branches(self.session_tree, first, second)
        except ComparisonError as error:
            self.notify(f"{str(error)[:1].upper()}{str(error)[1:]}.", severity="warning")
            return False

        def kept(choice: Kept | None) -> None:
            self.tree_view.marked.clear()
            self.tree_view.refresh()
            if choice is not None:
                self.dismiss(choice.leaf_id)

        view = CompareScreen(
            comparison,
            labels=dict(self.session_tree.labels),
            question=anchor_text(self.session_tree, comparison.anchor_id),
        )
        self.app.push_screen(view, kept)
        return True

    def action_cycle_filter(self) -> None:
        self.row_filter = ROW_FILTERS[(ROW_FILTERS.index(self.row_filter) + 1) % len(ROW_FILTERS)]
        self._show()

    def action_cursor(self, delta: int) -> None:
        self.tree_view.move(delta)

    def action_page(self, direction: int) -> None:
        self.tree_view.move(direction * max(1, self.tree_view.size.height - 1))

    def action_edge(self, end: int) -> None:
        self.tree_view.go(len(self.tree_view.rows) - 1 if end else 0)

    def action_to_leaf(self) -> None:
        if self.session_tree.leaf_id is not None:
            self._show(select=self.session_tree.leaf_id)
