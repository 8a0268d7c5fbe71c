"""Messages typed while a reply streams or the conversation is being compacted:
kept in order and sent once it is over, plain messages together as one, an
edit of a sent message on its own (as an alternative of that message)."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.sessions.attachments import Attachment
from core.sessions.entries import Entry


@dataclass(frozen=True)
class Queued:
    message: str
    """What is sent."""
    draft: str
    """What was typed (comes back to the input if sending fails)."""
    attachments: list[Attachment] = field(default_factory=list)
    edited: Entry | None = None
    """The sent message this one is an alternative of (an edit), if any."""

    @property
    def shown(self) -> str:
        """How the queue line names it."""
        return f"(edit) {self.message}" if self.edited is not None else self.message


class MessageQueue:
    def __init__(self) -> None:
        self._items: list[Queued] = []

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(item.shown for item in self._items)

    def add(self, item: Queued) -> None:
        self._items.append(item)

    def take(self) -> Queued | None:
        """What is sent next: an edit alone, else the plain messages up to the next
        edit as one message (paragraphs in the order typed); they leave the queue."""
        if not self._items:
            return None
        if self._items[0].edited is not None:
            return self._items.pop(0)
        count = next(
            (i for i, item in enumerate(self._items) if item.edited is not None), len(self._items)
        )
        items, self._items = self._items[:count], self._items[count:]
        return Queued(
            message="\n\n".join(item.message for item in items),
            draft="\n\n".join(item.draft for item in items),
            attachments=[a for item in items for a in item.attachments],
        )
