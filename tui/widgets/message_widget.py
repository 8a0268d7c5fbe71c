"""The base of every row in the chat view."""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from core.sessions.entries import Entry
from tui import keymap
from tui.widgets._context import ViewContext
from tui.widgets.branch_bar import BranchBar


class MessageWidget(Widget, can_focus=True):
    """One row of the chat: an entry of the current path.

    Rows are focusable so that focus can move from message to message (to
    branch, edit or regenerate from one). Focus is shown with an outline on
    the left edge, which changes no layout; and gaining or losing focus
    restyles this widget only, not its (possibly thousands of) descendants.
    """

    DEFAULT_CSS = """
    MessageWidget {
        height: auto;
        padding: 0 1 0 1;
        margin: 0 0 1 0;
        &:focus {
            outline-left: thick $accent;
            background: $accent 12%;
        }
        &.-compacted {
            opacity: 0.55;
        }
        & > .context-note {
            color: $text-warning;
            text-style: italic;
        }
    }
    """

    BINDINGS = keymap.bindings_of("chat_previous_message", "chat_next_message")

    def __init__(
        self,
        entry: Entry | None,
        context: ViewContext | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.entry: Entry | None = entry
        """The entry shown (``None`` for a reply still streaming)."""
        self.context = context or ViewContext()
        self._branch_bar: BranchBar | None = None
        self._note_line: Static | None = None

    @property
    def entry_id(self) -> str | None:
        """The id of the entry shown."""
        return self.entry.id if self.entry is not None else None

    def _on_mount(self, event: events.Mount) -> None:
        self.show_branch_info()
        self.show_context_note()

    @property
    def context_note(self) -> str | None:
        """How the model sees this entry when not as it is (shortened, left out)."""
        lookup = self.context.context_note
        return lookup(self.entry.id) if lookup is not None and self.entry is not None else None

    def show_context_note(self) -> None:
        """A line above the message while the model does not see it whole
        (the line is only mounted the first time one is needed)."""
        note = self.context_note
        if self._note_line is None:
            if note is None:
                return
            self._children_coming()
            self._note_line = Static(markup=False, classes="context-note")
            # At the top, where the reader starts (under the ◀ ▶ bar when there is one).
            first = 1 if self._branch_bar is not None else 0
            self.mount(self._note_line, before=first if len(self.children) > first else None)
        self._note_line.display = note is not None
        if note is not None:
            self._note_line.update(Content.assemble(("✂ ", "bold"), note))

    def show_branch_info(self) -> None:
        """Show ``◀ 2/3 ▶`` and the label above the message when it has any
        (the bar is only mounted the first time one is needed)."""
        lookup = self.context.branch_info
        info = lookup(self.entry.id) if lookup is not None and self.entry is not None else None
        if self._branch_bar is None:
            if info is None or self.entry is None:
                return
            self._children_coming()
            self._branch_bar = BranchBar(self.entry.id, info)
            self.mount(self._branch_bar, before=0 if self.children else None)
        self._branch_bar.show(info)

    def _children_coming(self) -> None:
        """Children are about to be mounted (a row that paints its own text moves
        it into a child first)."""

    def watch_has_focus(self, has_focus: bool) -> None:
        # Widget's own watcher restyles every descendant; the focus style lives on
        # this widget alone, so restyle just it. Its descendants paint its
        # background into their text (cached): repaint them, no restyle, no layout.
        self.app.stylesheet.update_nodes([self], animate=False)
        for node in self.walk_children(Widget, with_self=False):
            node.notify_style_update()
            node.refresh()

    async def action_focus_previous_message(self) -> None:
        """Move focus to the message above (the chat view mounts it if needed)."""
        await self._focus_neighbor(-1)

    async def action_focus_next_message(self) -> None:
        """Move focus to the message below."""
        await self._focus_neighbor(+1)

    async def _focus_neighbor(self, direction: int) -> None:
        focus_neighbor = getattr(self.parent, "focus_neighbor", None)
        if focus_neighbor is not None:
            await focus_neighbor(self, direction)
