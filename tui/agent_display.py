"""One reply of the conversation, shown in the chat view: a consumer of the
conversation's events (:mod:`core.events`).

Events are queued as they come and worked through in order in one task, so
the view can await (mounting, the final Markdown render) without holding up
the stream. Each assistant turn streams into a reply view of its own, started
at the turn's first event. While the turn's tool calls run, their cards follow
them (waiting, running with a ticking time, done, error, denied). When an
entry is saved, the live reply is finished in place with it and the results
fill its cards; whatever else was saved is caught up from the session's path
at the end, so the view ends as a rebuilt one would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.entries import Entry
from core.events import EntriesSaved, Event, ToolChanged, Waiting
from core.providers.base import STREAM_EVENT_TYPES, ProviderError, StreamEvent
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
        self._events: asyncio.Queue[Event | None] = asyncio.Queue()
        self._worker = asyncio.ensure_future(self._work())

    def on_event(self, event: Event) -> None:
        """The conversation's listener: queue the event for :meth:`_work`."""
        self._events.put_nowait(event)

    async def _work(self) -> None:
        while (event := await self._events.get()) is not None:
            if isinstance(event, STREAM_EVENT_TYPES):
                self.feed(event)
            elif isinstance(event, Waiting):
                self.show_waiting(event.seconds, event.error)
            elif isinstance(event, ToolChanged):
                self.show_tool(event.activity)
            elif isinstance(event, EntriesSaved):
                await self.show_saved(event.entries)

    async def drain(self) -> None:
        """Wait until every event queued so far is shown."""
        self._events.put_nowait(None)
        await asyncio.shield(self._worker)

    def current(self) -> ReplyView:
        """The reply of the turn now streaming (started if the turn has none yet)."""
        if self.reply is None or self.reply.is_finished:
            self.reply = self.chat_view.start_reply(self.model)
        return self.reply

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
                reply = self.current()
                await reply.finish(entry)
                await reply.wait_shown()
            else:
                await self.chat_view.append_entry(entry)

    def close(self) -> None:
        self._worker.cancel()
        self._timer.stop()
        self._running.clear()

    def _tick(self) -> None:
        if self.reply is not None:
            self.reply.tick_tools()
