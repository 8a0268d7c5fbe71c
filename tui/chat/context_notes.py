"""What the chat screen says, on the rows, about messages the model does not
see whole: sent shortened, or left out to fit its context window.

Worked out from what the next request would send
(:meth:`core.chat.conversation.Conversation.next_context`), after every turn,
compaction and move, so a row says it for as long as it is true, and a
resumed session says it at once; a toast was missed and forgotten.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.chat.conversation import Conversation

if TYPE_CHECKING:
    from core.tools.registry import ToolRegistry


class ContextNotes:
    """The notes by entry id, and the lookup the chat view's rows ask."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self._notes: dict[str, str] = {}

    def note(self, entry_id: str) -> str | None:
        return self._notes.get(entry_id)

    def work_out(self, tools: ToolRegistry | None) -> dict[str, str]:
        """The notes, with ``tools``' share of the window (safe in a thread:
        it only reads the conversation)."""
        return self.conversation.next_context(tools).left_out

    def replace(self, notes: dict[str, str]) -> bool:
        """Take ``notes``; True when they changed."""
        changed = notes != self._notes
        self._notes = notes
        return changed
