"""A tool result whose call is not on the path (normally results sit in their call's card)."""

from __future__ import annotations

from textual.app import ComposeResult

from core.sessions.messages import Message
from core.tools.outcome import saved_outcomes
from tui.widgets.message_widget import MessageWidget
from tui.widgets.tool_call_card import ToolCallCard


class ToolResultMessage(MessageWidget):
    """Tool results shown as cards of their own."""

    DEFAULT_CSS = """
    ToolResultMessage {
        margin: 0;
    }
    """

    def compose(self) -> ComposeResult:
        message = self.entry.payload if self.entry is not None else None
        if not isinstance(message, Message):
            return
        outcomes = saved_outcomes(message)
        for result in message.tool_results:
            yield ToolCallCard(None, result, self.context, outcome=outcomes[result.tool_call_id])
