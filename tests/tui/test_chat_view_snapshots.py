"""What the chat view looks like (SVG snapshots; update with ``--snapshot-update`` after checking)."""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.snapshot_apps.chat_apps import (
    ChatApp,
    ErrorApp,
    ImageApp,
    StreamedReplyApp,
    ThinkingApp,
    ToolCardApp,
)

SIZE = (80, 26)


def prepared(app: ChatApp):  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        await app.prepare(pilot)

    return run_before


def test_streamed_reply_with_code_block(snap_compare) -> None:
    """A question, then the finished streamed reply: bold text, a highlighted Python block, literal [bold] markup."""
    app = StreamedReplyApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=prepared(app))


def test_thinking_expanded_and_collapsed(snap_compare) -> None:
    """Two replies: the first's thinking expanded (three lines), the second's collapsed to one ▸ line."""
    app = ThinkingApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=prepared(app))


def test_tool_call_cards(snap_compare) -> None:
    """A list_files card (pretty JSON arguments, result cut to six lines + "24 more lines") and a red error card."""
    app = ToolCardApp()
    assert snap_compare(app, terminal_size=(80, 30), run_before=prepared(app))


def test_image_in_half_blocks(snap_compare) -> None:
    """A user message with a yellow disc on blue drawn in half blocks under its caption, and a missing-image note."""
    app = ImageApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=prepared(app))


def test_stopped_interrupted_and_error_replies(snap_compare) -> None:
    """A model line; replies marked "■ stopped", "⚠ interrupted (connection lost)", a red error "press ctrl+r to retry"."""
    app = ErrorApp()
    assert snap_compare(app, terminal_size=SIZE, run_before=prepared(app))
