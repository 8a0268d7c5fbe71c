"""Messages typed while the conversation is being compacted: kept in order and
sent together, as one message, once the compaction is over."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.attachments import Attachment


@dataclass(frozen=True)
class Queued:
    message: str
    """What is sent."""
    draft: str
    """What was typed (comes back to the input if sending fails)."""
    attachments: list[Attachment] = field(default_factory=list)


class MessageQueue:
    def __init__(self) -> None:
        self._items: list[Queued] = []

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(item.message for item in self._items)

    def add(self, item: Queued) -> None:
        self._items.append(item)

    def take(self) -> Queued | None:
        """Everything queued as one message (paragraphs in the order typed); the queue empties."""
        if not self._items:
            return None
        items, self._items = self._items, []
        return Queued(
            message="\n\n".join(item.message for item in items),
            draft="\n\n".join(item.draft for item in items),
            attachments=[a for item in items for a in item.attachments],
        )
