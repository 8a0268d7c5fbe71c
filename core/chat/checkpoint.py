"""Saving a reply while it streams, so a process killed mid-reply loses at
most the last few seconds of it.

The reply's entry id is chosen when the stream starts; the message so far is
saved under that id as a checkpoint (``SessionStore.save_partial``), not as an
entry, as soon as it has content and then at most every
:data:`CHECKPOINT_SECONDS`, so the deltas between saves are batched. The finished
reply is appended with the same id, which replaces the checkpoint in one
transaction; a checkpoint whose process died is recovered as the incomplete
reply when the session is next opened (``Session.open``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from core.sessions.entries import Entry
from core.sessions.ids import now_iso, uuid7
from core.sessions.session import Session

if TYPE_CHECKING:
    from core.providers.assemble import MessageBuilder

CHECKPOINT_SECONDS = 2.0
"""How often a streaming reply is saved after its first content: often enough
that a crash loses little, rarely enough that saving never slows the stream."""

STOPPED = "the program stopped before the reply ended"
"""Why a recovered checkpoint is incomplete (its message's ``error``)."""


class ReplyCheckpoint:
    """One streaming reply's checkpoints; :attr:`entry_id` is the id its entry must have."""

    def __init__(
        self,
        session: Session,
        *,
        interval: float = CHECKPOINT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.entry_id = uuid7()
        self._session = session
        self._parent = session.leaf_id
        self._created_at = now_iso()
        self._interval = interval
        self._clock = clock
        self._due = clock()  # the first content is saved at once

    def due(self, builder: MessageBuilder) -> bool:
        """Whether a checkpoint is due (cheap: called for every stream event)."""
        return builder.has_content and self._clock() >= self._due

    async def save(self, builder: MessageBuilder) -> None:
        self._due = self._clock() + self._interval
        if not self._session.persisted:
            return
        entry = Entry(
            id=self.entry_id,
            parent_id=self._parent,
            session_id=self._session.id,
            type="message",
            created_at=self._created_at,
            payload=builder.snapshot(STOPPED),
        )
        try:
            await self._session.store.save_partial(entry)
        except Exception:  # a busy or failing file must not end the reply: its own save says
            pass
