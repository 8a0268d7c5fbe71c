"""The line above a message that has alternatives or a label: ``◀ 2/3 ▶  ⚑ label``.

Clicking an arrow asks for the previous or next alternative
(:class:`BranchBar.SwitchRequested`, handled by the chat screen).
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from tui.widgets._context import BranchInfo
from tui.widgets._text import one_line


def arrows_text(info: BranchInfo) -> str:
    return f"◀ {info.index + 1}/{info.count} ▶" if info.count > 1 else ""


class BranchBar(Static):
    DEFAULT_CSS = """
    BranchBar {
        height: 1;
        color: $text-muted;
    }
    """

    class SwitchRequested(Message):
        """An arrow was clicked: ``direction`` is -1 (previous) or +1 (next)."""

        def __init__(self, entry_id: str, direction: int) -> None:
            super().__init__()
            self.entry_id = entry_id
            self.direction = direction

    def __init__(self, entry_id: str, info: BranchInfo) -> None:
        super().__init__(markup=False)
        self.entry_id = entry_id
        self.info = info

    def show(self, info: BranchInfo | None) -> None:
        self.display = info is not None
        if info is None:
            return
        self.info = info
        arrows = arrows_text(info)
        label = f"⚑ {one_line(info.label, 60)}" if info.label else ""
        self.update(
            Content.assemble(arrows, ("  " if arrows and label else ""), (label, "$text-warning"))
        )

    def on_mount(self) -> None:
        self.show(self.info)

    async def _on_click(self, event: events.Click) -> None:
        width = len(arrows_text(self.info))
        if not width:
            return
        if event.x <= 1:
            direction = -1
        elif width - 2 <= event.x < width:
            direction = 1
        else:
            return
        event.stop()
        self.post_message(self.SwitchRequested(self.entry_id, direction))
