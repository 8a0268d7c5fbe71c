"""The offline ``demo`` model: canned, deterministic replies, no key, no network.

It streams through the same events as a real provider (thinking, Markdown
with a heading, a list and a Python code block, usage), so a new user can try
every feature of the app (``demo/NAME`` answers with other tips, so
``/compare demo demo/NAME`` compares two). When the latest user message
mentions "tool", it calls ``list_directory`` on the working directory first
(a folder that is always there) and answers after the result comes back;
"write" or "save" calls ``write_file`` and "run" or "command" calls
``run_command``, both inside the scratch directory ``tangents-demo/`` it
names, so the approval dialog can be tried. Asked for a summary (compaction,
branch summary), it writes one from the transcript it was given: who asked what."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator

from core.providers.base import (
    ChatRequest,
    Done,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageEvent,
)
from core.sessions.messages import Message, StopReason, Usage

LABEL = "demo — offline, canned replies"
DEFAULT_DELAY = 0.01
"""Seconds between streamed pieces: fast, but visibly streaming."""

TIP_KEYS = {
    "focus_messages": "ctrl+↑",
    "branch_here": "alt+h",
    "retry_message": "alt+r",
    "open_tree": "ctrl+g",
    "pick_model": "ctrl+l",
}
"""The keys the tips name: the keymap's defaults (core cannot read the app's
keymap; a test checks each against it)."""

_TIPS = (
    "press ctrl+↑, then alt+h on any message to branch from there",
    "regenerate an answer (ctrl+↑, then alt+r) and flip between alternatives with ◀ ▶",
    "`/compact` folds a long conversation into a summary",
    "ctrl+g shows the tree of every branch of this session",
    "ask it to use a tool: it lists this folder and shows the tool card",
    "ask it to write a note or run a command: the approval dialog asks you first",
    "`/compare demo demo/other` puts two answers side by side",
)
MODEL_TIP = "pick a real model with ctrl+l when you have a key"


class DemoProvider:
    name = "demo"
    label = LABEL

    def __init__(self, delay: float = DEFAULT_DELAY) -> None:
        self.delay = delay

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        last = request.messages[-1] if request.messages else Message(role="user")
        asked = _last_user_text(request.messages)
        turn = sum(1 for m in request.messages if m.role == "assistant")
        if _is_summary_request(request):
            reply = _summary(asked, request.system or "")
            for piece in _pieces(reply):
                yield TextDelta(piece)
                await self._pause()
            yield UsageEvent(
                Usage(input_tokens=max(1, len(asked) // 4), output_tokens=len(reply) // 4)
            )
            yield Done("stop")
            return
        thinking = f"The user wrote {len(asked)} characters. This is the demo model, so I answer from a script."
        for piece in _pieces(thinking):
            yield ThinkingDelta(piece)
            await self._pause()
        stop: StopReason
        call = _tool_call(asked) if last.role == "user" else None
        if call is not None:
            reply, name, arguments = call
            for piece in _pieces(reply):
                yield TextDelta(piece)
                await self._pause()
            yield ToolCallDelta(0, id=f"demo_call_{turn}", name=name)
            for piece in _pieces(json.dumps(arguments), size=8):
                yield ToolCallDelta(0, arguments=piece)
                await self._pause()
            stop = "tool_use"
        else:
            reply = _reply(asked, turn, last, request.model)
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


SCRATCH = "tangents-demo"
"""The directory (under the working directory) the demo's side-effect tools use."""


def _tool_call(asked: str) -> tuple[str, str, dict[str, str]] | None:
    """What the demo says and calls for a message that asks for a tool, if it does."""
    words = set(re.findall(r"[a-z]+", asked.lower()))
    if words & {"write", "save"}:
        path = f"{SCRATCH}/notes.md"
        return (
            f"I'll write `{path}` (in the scratch directory `{SCRATCH}/`): you will be asked first.",
            "write_file",
            {"path": path, "content": f"# Notes from the demo\n\nYou asked: {asked[:200]}\n"},
        )
    if words & {"run", "command", "shell"}:
        return (
            f"I'll run a command in the scratch directory `{SCRATCH}/`: you will be asked first.",
            "run_command",
            {"command": f"mkdir -p {SCRATCH} && ls -la {SCRATCH}"},
        )
    if "tool" in words or "tools" in words:
        return ("I'll look at the files here first.", "list_directory", {"path": "."})
    return None


def _is_summary_request(request: ChatRequest) -> bool:
    system = (request.system or "").lower()
    return not request.tools and "summar" in system and "conversation" in system


def _summary(prompt: str, system: str) -> str:
    """A summary of the ``[User]:``/``[Assistant]:`` transcript in ``prompt``."""
    asked = [" ".join(q.split())[:120] for q in re.findall(r"^\[User\]: (.+)$", prompt, re.M)]
    answers = len(re.findall(r"^\[Assistant\]: ", prompt, re.M))
    tools = sorted(set(re.findall(r"^\[Assistant tool calls\]: (\w+)", prompt, re.M)))
    questions = "; ".join(f"“{q}”" for q in asked) or "nothing"
    replies = f"the demo model answered {answers} time{'s' if answers != 1 else ''}"
    used = f", calling {', '.join(tools)}" if tools else ""
    if "branch" in system.lower():
        return f"The user asked {questions}; {replies}{used}. Then the user went back to try something else."
    last = f"“{asked[-1]}”" if asked else "the last question"
    return (
        f"## Goal\nThe user asked {questions}.\n\n"
        f"## Progress\n- {replies[0].upper()}{replies[1:]}{used}.\n\n"
        f"## Next steps\n- Carry on from {last}.\n"
    )


def _last_user_text(messages: tuple[Message, ...]) -> str:
    for message in reversed(messages):
        if message.role == "user" and message.text:
            return message.text
    return ""


def _reply(asked: str, turn: int, last: Message, model: str = "demo") -> str:
    """The canned answer; each ``demo/NAME`` gives its own tips (so
    ``/compare demo demo/NAME`` has differences to show)."""
    variant = model.partition("/")[2]
    tip = turn + (1 + sum(map(ord, variant)) % (len(_TIPS) - 1) if variant else 0)
    quoted = " ".join(asked.split())[:80] or "nothing yet"
    if last.role == "tool_result" and any(r.is_error for r in last.tool_results):
        said = " ".join(last.text.split())[:120]
        opening = f"The tool call did not run ({said}). In a real session the model would try another way."
    elif last.role == "tool_result":
        opening = f"The tool returned {len(last.text)} characters. In a real session the model would use them."
    else:
        opening = f'You said: "{quoted}". I am **{LABEL}**: no network, no API key, the same answer every time.'
    return (
        f"## Demo reply {turn + 1}{f' from {model}' if variant else ''}\n\n"
        f"{opening}\n\n"
        "Things to try:\n\n"
        f"- {_TIPS[tip % len(_TIPS)]}\n"
        f"- {_TIPS[(tip + 1) % len(_TIPS)]}\n"
        f"- {MODEL_TIP}\n\n"
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
