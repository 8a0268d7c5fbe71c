"""One run of the agent loop, shown in the chat view.

Each assistant turn streams into a reply view of its own, started at the
turn's first event. While the turn's tool calls run, their cards follow them
(waiting, running with a ticking time, done, error, denied). When the loop
saves a round, the reply is finished with the saved entry and the results
fill its cards; whatever else was saved (the last turn, what a stop saved) is
caught up from the session's path, so the view ends as a rebuilt one would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.entries import Entry
from core.providers.base import ProviderError, StreamEvent
from core.sanitize import strip_control

if TYPE_CHECKING:
    from core.agent import ToolActivity
    from tui.widgets.chat_view import ChatView
    from tui.widgets.reply_view import ReplyView

TICK_SECONDS = 1.0
"""How often running cards update their time (one timer for all of them)."""


class AgentDisplay:
    def __init__(self, chat_view: ChatView, model: str, *, after: str | None) -> None:
        """``after``: the last entry already shown (the user's message)."""
        self.chat_view = chat_view
        self.model = model
        self.reply: ReplyView | None = None
        self._after = after
        self._shown: set[str] = set()
        self._running: set[str] = set()
        """Ids of the calls running now."""
        self._timer = chat_view.set_interval(TICK_SECONDS, self._tick, pause=True)

    def current(self) -> ReplyView:
        """The reply of the turn now streaming (started if the turn has none yet)."""
        if self.reply is None or self.reply.is_finished:
            self.reply = self.chat_view.start_reply(self.model)
        return self.reply

    # --- callbacks of run_agent (sync ones must not raise) -----------------------

    def feed(self, event: StreamEvent) -> None:
        self.current().feed(event)

    def show_waiting(self, seconds: float, error: ProviderError) -> None:
        self.current().show_waiting(seconds, strip_control(error.message))

    def show_tool(self, activity: ToolActivity) -> None:
        if self.reply is not None:
            self.reply.show_tool(activity)
        if activity.state == "running":
            self._running.add(activity.call.id)
        else:
            self._running.discard(activity.call.id)
        if self._running:
            self._timer.resume()
        else:
            self._timer.pause()

    async def round_saved(self, turn: Entry, results: Entry) -> None:
        """A turn with tool calls was saved with its results: show them saved."""
        await self.show_saved([turn, results])
        self.reply = None

    # --- after the loop -------------------------------------------------------

    async def catch_up(self, path: Sequence[Entry]) -> None:
        """Show the entries saved on ``path`` since the run started that are not shown yet."""
        ids = [entry.id for entry in path]
        if self._after is not None and self._after not in ids:
            await self.chat_view.set_entries(path)  # the path changed under us: show it anew
            return
        start = ids.index(self._after) + 1 if self._after is not None else 0
        await self.show_saved(path[start:])
        if self.reply is not None and not self.reply.is_finished:
            await self.chat_view.set_entries(path)  # stopped before the reply was saved: drop it

    async def show_saved(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            if entry.id in self._shown:
                continue
            self._shown.add(entry.id)
            message = entry.message
            if message is not None and message.role == "assistant":
                await self.current().finish(entry)
            else:
                await self.chat_view.append_entry(entry)

    def close(self) -> None:
        self._timer.stop()
        self._running.clear()

    def _tick(self) -> None:
        if self.reply is not None:
            self.reply.tick_tools()
