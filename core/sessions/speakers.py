"""A round table as one speaker hears it (Tomori's rule): pure functions.

When agent X is asked, X's own replies stay assistant messages (with their
thinking, which the provider rules keep for X's model); the user's messages
and every other speaker's replies become user-role messages with ``Name: ``
before the text, so the context builder's merge of consecutive user items
keeps strict chat templates alternating. Another speaker's thinking is not
sent; its tool calls become one line of text and their results are left out.

A reply with no agent (the session's own model) is a speaker like the others,
named by its model, when an agent is asked; when the session's model is asked
it hears its own replies as assistant and the agents' as named users. A path
with no agent reply, answered by the session's model, is sent as it always was.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.sessions.content import Block, TextContent, ThinkingContent, ToolCallContent
from core.sessions.entries import Note
from core.sessions.messages import Message


@dataclass(frozen=True)
class Speaker:
    """Who is asked: an agent's name, or None for the session's own model."""

    agent: str | None = None
    user_name: str | None = None
    """Put as ``Name: `` before the user's messages; None: no prefix."""
    system: str | None = None
    """An agent's own system prompt, the only one its requests carry."""
    thinking: str = "off"
    """The thinking level it answers with (for the session's model: the
    default when the path names none)."""
    note: Note | None = None
    """An agent's own note (``[[agents]]`` ``note``/``note_depth``): pinned in
    its requests only, beside the session's note."""


class Hearing:
    """The path's messages (user, assistant and tool results, in order) as
    ``speaker`` is sent them, one at a time: :meth:`hear` returns what to send
    for a message, or None for a tool result of another speaker's call."""

    def __init__(self, speaker: Speaker, remap: bool) -> None:
        """``remap`` False: everything is sent as it is (no agent on the path
        and the session's model asked)."""
        self.speaker = speaker
        self.remap = remap
        self._others_results = False

    def hear(self, message: Message) -> Message | None:
        if not self.remap:
            return message
        if message.role == "tool_result":
            return None if self._others_results else message
        self._others_results = False
        if message.role == "assistant" and message.agent != self.speaker.agent:
            self._others_results = bool(message.tool_calls)
            return _as_user(message, speaker_name(message))
        if message.role == "user" and self.speaker.user_name:
            return _as_user(message, self.speaker.user_name)
        return message


def speaker_name(message: Message) -> str:
    """Who wrote an assistant message, as others hear it: its agent, else its model."""
    return message.agent or message.model or "assistant"


def _as_user(message: Message, name: str) -> Message:
    """``message`` as a user-role item said by ``name``: its first text after
    ``Name: ``, thinking left out, tool calls as one line."""
    blocks: list[Block] = []
    named = False
    for block in message.content:
        if isinstance(block, ThinkingContent | ToolCallContent):
            continue
        if isinstance(block, TextContent) and not named:
            block = TextContent(f"{name}: {block.text}")
            named = True
        blocks.append(block)
    calls = message.tool_calls
    if calls:
        used = ", ".join(call.name for call in calls)
        line = f"[{name} used tools: {used}]"
        blocks.append(TextContent(line if named else f"{name}: {line}"))
        named = True
    if not named:
        blocks.insert(0, TextContent(f"{name}:"))
    return Message(role="user", content=tuple(blocks))
