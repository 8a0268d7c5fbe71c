"""What a conversation has cost: the usage entries carry, per branch and per session.

An assistant message carries the usage of the request that wrote it; a
compaction carries the usage of its summary request(s) in ``details["usage"]``.
Branch totals add up the path. Session totals (every branch) are read once
with one SQL aggregate (:meth:`core.sessions.persistence.SessionStore.session_usage`) and then
kept up to date from the entries appended since (:meth:`Session.on_append`).
"""

from __future__ import annotations

from collections.abc import Iterable

from core.sessions.entries import Compaction, Entry
from core.sessions.messages import Usage
from core.sessions.persistence import SessionStore


def entry_usage(entry: Entry) -> Usage | None:
    """The usage an entry carries (an assistant message's, a compaction's summary requests')."""
    payload = entry.payload
    if isinstance(payload, Compaction):
        usage = payload.details.get("usage")
        return Usage.from_dict(usage) if isinstance(usage, dict) else None
    message = entry.message
    if message is not None and message.role == "assistant":
        return message.usage
    return None


def total_usage(entries: Iterable[Entry]) -> Usage:
    total = Usage()
    for entry in entries:
        usage = entry_usage(entry)
        if usage is not None:
            total = total + usage
    return total


class SessionTotals:
    """Usage of a whole session, every branch: read once, then added to as entries arrive."""

    def __init__(self) -> None:
        self.usage: Usage | None = None
        """None until :meth:`load` has run."""

    async def load(self, store: SessionStore, session_id: str) -> Usage:
        """Read the stored total. Appends that finished before the read are in it;
        later ones are added by :meth:`add` (the store runs its calls in order)."""
        self.usage = await store.session_usage(session_id)
        return self.usage

    def add(self, entries: Iterable[Entry]) -> None:
        """Count newly appended entries (a listener for :meth:`Session.on_append`)."""
        if self.usage is not None:
            self.usage = self.usage + total_usage(entries)
