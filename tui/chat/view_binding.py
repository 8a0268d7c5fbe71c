"""The chat view kept in step with the conversation: the one consumer of its
events (:mod:`core.chat.events`) that changes what the view shows.

One binding per chat screen, for the screen's life. Events are queued as they
come and worked through in order in one task, so the view can await
(mounting, the final Markdown render) without holding up the stream:

- what was saved (:class:`~core.chat.events.EntriesSaved`: the user's message, a
  reply, tool results, a compaction, a branch summary) is added at the
  bottom; a reply that is streaming is finished in place with its entry and
  the results fill its cards;
- a move (:class:`~core.chat.events.PositionMoved`) shows the new path;
- while a reply is written (on a round table, by each agent in turn:
  :class:`~core.chat.events.AgentAsked` names the next), each assistant turn
  streams into a reply view of its own, started at the turn's first event,
  named for its agent, and its tool calls' cards
  follow them (waiting, running with a ticking time, done, error, denied);
  a retry's countdown and a silent server's wait in seconds
  (:class:`~core.chat.events.Silence`) show in it too.

At the end of a reply (:meth:`ViewBinding.end_reply`) whatever was saved on
the path and not shown is caught up, so the view ends as a rebuilt one would.

A message sent before the view was there (just after launch) is shown by the
screen in a stand-in row (:attr:`ViewBinding.stand_in`): the frame that shows
the saved message is the first without it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.chat.events import (
    AgentAsked,
    EntriesSaved,
    Event,
    PositionMoved,
    Silence,
    ToolChanged,
    Waiting,
)
from core.providers.base import STREAM_EVENT_TYPES, ProviderError, StreamEvent
from core.sanitize import strip_control
from core.sessions.entries import Entry

if TYPE_CHECKING:
    from textual.widget import Widget

    from core.chat.conversation import Conversation
    from core.chat.results import ToolActivity
    from tui.widgets.chat_view import ChatView
    from tui.widgets.reply_view import ReplyView

_SHOWN = (
    *STREAM_EVENT_TYPES,
    AgentAsked,
    Waiting,
    Silence,
    ToolChanged,
    EntriesSaved,
    PositionMoved,
)
"""The events the binding acts on."""

TICK_SECONDS = 1.0
"""How often running cards update their time (one timer for all of them)."""


class ViewBinding:
    def __init__(
        self, chat_view: ChatView, conversation: Conversation, stand_in: Widget | None = None
    ) -> None:
        """Show ``conversation``'s events in ``chat_view`` (which shows its path now)."""
        self.chat_view = chat_view
        self.conversation = conversation
        self.model = conversation.model
        self.agent: str | None = None
        """The round-table agent answering now (None: the session's model)."""
        self.reply: ReplyView | None = None
        self._after: str | None = None
        """The last entry shown before the reply being written (None: no reply)."""
        self._shown: set[str] = set()
        self.stand_in = stand_in
        """The screen's row for a message sent before the view was there: while it
        is displayed, the next user message saved hides it."""
        self._running: set[str] = set()
        """Ids of the calls running now."""
        self._timer = chat_view.set_interval(TICK_SECONDS, self._tick, pause=True)
        self._events: asyncio.Queue[tuple[Event, bool]] = asyncio.Queue()
        """Each event with whether a reply was being written when it came."""
        self._worker = asyncio.ensure_future(self._work())
        self._stop_listening = conversation.subscribe(self._queue)

    def _queue(self, event: Event) -> None:
        # Only what changes the view: a comparison's thousands of column events
        # would each wake the worker for nothing.
        if isinstance(event, _SHOWN):
            self._events.put_nowait((event, self._after is not None))

    async def _work(self) -> None:
        while True:
            event, replying = await self._events.get()
            try:
                # The live reply's events; a compaction's or a summary's retries are the screen's.
                if isinstance(event, STREAM_EVENT_TYPES) and replying:
                    self.feed(event)
                elif isinstance(event, AgentAsked) and replying:
                    self.model, self.agent = event.model, event.agent
                elif isinstance(event, Waiting) and replying:
                    self.show_waiting(event.seconds, event.error)
                elif isinstance(event, Silence) and replying:
                    self.current().show_silence(event.text)
                elif isinstance(event, ToolChanged) and replying:
                    self.show_tool(event.activity)
                elif isinstance(event, EntriesSaved):
                    await self.show_saved(self._on_path(event.entries))
                elif isinstance(event, PositionMoved):
                    await self.chat_view.set_entries(self.conversation.session.path)
            finally:
                self._events.task_done()

    def _on_path(self, entries: Sequence[Entry]) -> list[Entry]:
        """Those of ``entries`` on the current path (a comparison's other columns
        are saved beside it: the move to the first one's reply shows that)."""
        on_path = {entry.id for entry in self.conversation.session.path}
        return [entry for entry in entries if entry.id in on_path]

    async def settled(self) -> None:
        """Wait until every event queued so far is shown."""
        await asyncio.shield(self._events.join())

    def begin_reply(self) -> None:
        """A reply is about to be written after what the path ends with now."""
        self.model, self.agent = self.conversation.model, None
        self._after = self.conversation.session.leaf_id

    async def end_reply(self) -> None:
        """The reply is over (answered, failed or stopped): show what it saved."""
        try:
            await self.settled()
            await self.catch_up(self.conversation.session.path)
        finally:
            self._after = None
            self._running.clear()
            self._timer.pause()

    def current(self) -> ReplyView:
        """The reply of the turn now streaming (started if the turn has none yet)."""
        if self.reply is None or self.reply.is_finished:
            self.reply = self.chat_view.start_reply(self.model, self.agent)
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
        """Show the entries saved on ``path`` since the reply began that are not shown yet."""
        ids = [entry.id for entry in path]
        if self._after is not None and self._after not in ids:
            await self.chat_view.set_entries(path)  # the path changed under us: show it anew
            return
        start = ids.index(self._after) + 1 if self._after is not None else 0
        await self.show_saved(path[start:])
        if self.reply is not None and not self.reply.is_finished:
            await self.chat_view.set_entries(path)  # stopped before the reply was saved: drop it

    async def show_saved(self, entries: Sequence[Entry]) -> None:
        stand_in = self.stand_in
        if stand_in is None or not stand_in.display or not any(map(_is_user, entries)):
            await self._show_saved(entries)
            return
        with self.chat_view.app.batch_update():  # never both on screen, not even for a frame
            await self._show_saved(entries)
            stand_in.display = False

    async def _show_saved(self, entries: Sequence[Entry]) -> None:
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
        self._stop_listening()
        self._worker.cancel()
        self._timer.stop()
        self._running.clear()

    def _tick(self) -> None:
        if self.reply is not None:
            self.reply.tick_tools()


def _is_user(entry: Entry) -> bool:
    return entry.message is not None and entry.message.role == "user"
