"""The chat screen's state that is not UI: the session, and the model, thinking
level and system prompt the next message will use.

Changing the model or thinking level only changes what is pending here; the
``model_change`` (and system message) is appended together with the next user
message, as print mode does, so trying models leaves no empty sessions or
stray entries behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.context import system_prompt
from core.entries import THINKING_LEVELS, Entry
from core.messages import user_text
from core.session import Session
from core.settings import Settings
from core.tokens import context_tokens
from core.usage import SessionTotals, total_usage
from tui.attachments import Attachment


@dataclass(frozen=True)
class Totals:
    """What the footer shows: the current branch's usage, the session's, the context."""

    tokens: int = 0
    cost: float = 0.0
    context_tokens: int | None = None
    """What the next request will hold (the latest reply's reported usage plus an
    estimate of what came after it); None on an empty path."""
    session_tokens: int | None = None
    """Every branch of the session; None until the session's totals are loaded."""
    session_cost: float = 0.0


class Conversation:
    def __init__(
        self,
        session: Session,
        settings: Settings,
        *,
        default_model: str,
        default_thinking: str,
        api_base: str | None,
        model: str | None = None,
        thinking: str | None = None,
        system: str | None = None,
    ) -> None:
        """``model``/``thinking``/``system`` are explicit choices (command-line
        flags) that beat what the session's path says; the defaults do not."""
        self.session = session
        self.settings = settings
        self.api_base = api_base
        path_model, path_thinking = session.model(default_model, default_thinking)
        self.model = model or path_model
        self.thinking = thinking or path_thinking
        self.pending_system = system or (None if session.path else settings.system)
        self.session_totals = SessionTotals()
        """Usage of every branch: :meth:`load_totals` once, then every append adds to it."""
        session.on_append(self.session_totals.add)

    async def load_totals(self) -> None:
        await self.session_totals.load(self.session.store, self.session.id)

    @property
    def system(self) -> str | None:
        """The system prompt the next request will carry."""
        return self.pending_system or system_prompt(self.session.path)

    def next_thinking_level(self) -> str:
        index = THINKING_LEVELS.index(self.thinking) if self.thinking in THINKING_LEVELS else 0
        self.thinking = THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)]
        return self.thinking

    async def send(self, text: str, attachments: Sequence[Attachment] = ()) -> list[Entry]:
        """Save the user's message (with any system/model change first) in one
        transaction; returns the new entries."""
        for attachment in attachments:
            await self.session.store.put_blob(attachment.blob)
        preamble = [
            self.session.system_change_for(self.pending_system),
            self.session.model_change_for(self.model, self.thinking),
        ]
        message = user_text(text, tuple(a.content for a in attachments))
        entries = await self.session.append_many([p for p in preamble if p is not None] + [message])
        self.pending_system = None
        return entries

    async def prepare_retry(self, entry_id: str | None = None) -> bool:
        """Move the leaf back before a reply (``entry_id``, else the last one if
        the path ends with a reply) and record a model change if needed; False
        when there is no message to answer."""
        if entry_id is not None:
            entry = await self.session.entry(entry_id)
            if entry.message is None or entry.message.role != "assistant":
                return False
            await self.session.move_leaf(entry.parent_id)
        else:
            path = self.session.path
            if path and path[-1].message is not None and path[-1].message.role == "assistant":
                await self.session.move_leaf(path[-1].parent_id)
        last = next((e.message for e in reversed(self.session.path) if e.message is not None), None)
        if last is None or last.role not in ("user", "tool_result"):
            return False
        change = self.session.model_change_for(self.model, self.thinking)
        if change is not None:
            await self.session.append(change)
        return True

    def totals(self) -> Totals:
        path = self.session.path
        branch = total_usage(path)
        session = self.session_totals.usage
        return Totals(
            tokens=branch.total_tokens,
            cost=branch.cost,
            context_tokens=context_tokens(path, self.model, exact=False) if path else None,
            session_tokens=session.total_tokens if session is not None else None,
            session_cost=session.cost if session is not None else 0.0,
        )
