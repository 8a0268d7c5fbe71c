"""The offline ``demo`` model: canned, deterministic replies, no key, no network.

It streams through the same events as a real provider (thinking, Markdown
with a heading, a list and a Python code block, usage), so a new user can try
every feature of the app. When the latest user message mentions "tool", it
calls ``read_file`` first and answers after the result comes back.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

from core.messages import Message, Usage
from core.providers.base import (
    ChatRequest,
    Done,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)

LABEL = "demo — offline, canned replies"
DEFAULT_DELAY = 0.01
"""Seconds between streamed pieces: fast, but visibly streaming."""

_TIPS = (
    "press the branch key on any message to try another direction",
    "regenerate an answer and flip between siblings with ◀ ▶",
    "`/compact` folds a long conversation into a summary",
    "the tree screen shows every branch of this session",
    "ask for a tool and watch the approval card",
)


class DemoProvider:
    name = "demo"
    label = LABEL

    def __init__(self, delay: float = DEFAULT_DELAY) -> None:
        self.delay = delay

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        last = request.messages[-1] if request.messages else Message(role="user")
        asked = _last_user_text(request.messages)
        turn = sum(1 for m in request.messages if m.role == "assistant")
        thinking = f"The user wrote {len(asked)} characters. This is the demo model, so I answer from a script."
        for piece in _pieces(thinking):
            yield ThinkingDelta(piece)
            await self._pause()
        if last.role == "user" and "tool" in asked.lower():
            reply = "I'll read the file first."
            arguments = json.dumps({"path": "README.md"})
            for piece in _pieces(reply):
                yield TextDelta(piece)
                await self._pause()
            yield ToolCallDelta(0, id=f"demo_call_{turn}", name="read_file")
            for piece in _pieces(arguments, size=8):
                yield ToolCallDelta(0, arguments=piece)
                await self._pause()
            stop = "tool_use"
        else:
            reply = _reply(asked, turn, last)
            for piece in _pieces(reply):
                yield TextDelta(piece)
                await self._pause()
            stop = "stop"
        prompt = sum(len(m.text) for m in request.messages) + len(request.system or "")
        yield UsageEvent(
            Usage(input_tokens=max(1, prompt // 4), output_tokens=(len(thinking) + len(reply)) // 4)
        )
        yield Done(stop)

    async def _pause(self) -> None:
        if self.delay:
            await asyncio.sleep(self.delay)


def _last_user_text(messages: tuple[Message, ...]) -> str:
    for message in reversed(messages):
        if message.role == "user" and message.text:
            return message.text
    return ""


def _reply(asked: str, turn: int, last: Message) -> str:
    quoted = " ".join(asked.split())[:80] or "nothing yet"
    if last.role == "tool_result":
        opening = f"The tool returned {len(last.text)} characters. In a real session the model would use them."
    else:
        opening = f'You said: "{quoted}". I am **{LABEL}**: no network, no API key, the same answer every time.'
    return (
        f"## Demo reply {turn + 1}\n\n"
        f"{opening}\n\n"
        "Things to try:\n\n"
        f"- {_TIPS[turn % len(_TIPS)]}\n"
        f"- {_TIPS[(turn + 1) % len(_TIPS)]}\n"
        "- pick a real model with the model picker when you have a key\n\n"
        "```python\n"
        "def fib(n: int) -> int:\n"
        '    """The n-th Fibonacci number."""\n'
        "    a, b = 0, 1\n"
        "    for _ in range(n):\n"
        "        a, b = b, a + b\n"
        "    return a\n"
        "```\n"
    )


def _pieces(text: str, size: int = 0) -> list[str]:
    """Word-sized pieces (or fixed ``size`` characters), like a model's tokens."""
    if size:
        return [text[i : i + size] for i in range(0, len(text), size)]
    return re.findall(r"\s*\S+|\s+", text)
