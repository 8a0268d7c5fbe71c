"""What print mode writes: the conversation's events as text or as JSON lines,
to a stdout that a closed pipe cannot break, and the approval rule for tools.

Text: the answer on stdout (each round-table agent's under a line ``Name:``,
answers apart by an empty line), tool activity on stderr as ``tool: ...`` lines,
notices, retries and compactions on stderr as ``tangents: ...`` (one line
when each starts and one when it ends). JSON (``--json``): one
object per event on stdout (:func:`core.chat.events_json.event_json`), opened by
``{"type": "session", ...}``.
"""

from __future__ import annotations

import json
import os
import sys
import time

from core.chat.events import (
    AgentAsked,
    CompactionEnded,
    CompactionStarted,
    Event,
    Notice,
    Silence,
    ToolChanged,
    Waiting,
)
from core.chat.events_json import event_json
from core.providers.base import STREAM_EVENT_TYPES, TextDelta
from core.sanitize import StreamCleaner, json_for_terminal, strip_control
from core.sessions.entries import Compaction
from core.tools.base import Approval, ApproveFn
from core.tools.registry import ToolRegistry

SILENCE_SAID = 10
"""Seconds without a word after which text print mode says so on stderr."""
_COMPACTING_WHY = {
    "auto": "the context is near the model's window",
    "overflow": "the model said the context is too long",
    "manual": "asked for",
    "fit": "older messages would not fit the model's window",
}


class PipeSafeStdout:
    """stdout that a closed pipe (``| head -1``) cannot break: the first
    failed write points the descriptor at /dev/null (so nothing fails again,
    not even Python's flush at exit) and the reply goes on to be saved."""

    def __init__(self) -> None:
        self.closed = False

    def write(self, text: str) -> None:
        if self.closed:
            return
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            self.closed = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)


class TextPrinter:
    """The answer as plain text; a tool round starts a new line."""

    def __init__(self, out: PipeSafeStdout) -> None:
        self.out = out
        self.cleaner = StreamCleaner() if sys.stdout.isatty() else None
        self.wrote_newline = True
        self.new_turn = False
        self.said_silence = False
        """This silence was said already (one line each)."""
        self.retrying = False
        """A retry was announced and has not yet been heard from."""
        self.compacting_since: float | None = None
        self.answers = 0
        """Round-table answers begun (each under its agent's name)."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, Silence):
            if event.seconds >= SILENCE_SAID and not self.said_silence:
                self.said_silence = True
                say(event.text)
            return
        if isinstance(event, STREAM_EVENT_TYPES):
            self.said_silence = False
            if self.retrying:
                self.retrying = False
                say("the retry went through")
        if isinstance(event, AgentAsked):
            self._header(event.agent)
        elif isinstance(event, (CompactionStarted, CompactionEnded)):
            self._compaction(event)
        elif isinstance(event, TextDelta) and event.text:
            self._write(self.cleaner.feed(event.text) if self.cleaner else event.text)
        elif isinstance(event, ToolChanged):
            self._tool(event)
        elif isinstance(event, Waiting):
            self.retrying = True
            say(f"{event.error.message}; retrying in {event.seconds:.0f} s")
        elif isinstance(event, Notice):
            say(event.text)

    def _header(self, agent: str) -> None:
        """``Name:`` on a line of its own, after an empty line if an answer came before."""
        self._write(self.cleaner.flush() if self.cleaner else "")
        if self.answers:
            self.out.write("\n" if self.wrote_newline else "\n\n")
        self.answers += 1
        self.out.write(f"{agent}:\n")
        self.wrote_newline = True
        self.new_turn = False

    def _write(self, text: str) -> None:
        if not text:
            return
        if self.new_turn and not self.wrote_newline:
            self.out.write("\n")
        self.new_turn = False
        self.out.write(text)
        self.wrote_newline = text.endswith("\n")

    def _compaction(self, event: CompactionStarted | CompactionEnded) -> None:
        if isinstance(event, CompactionStarted):
            self.compacting_since = time.monotonic()
            why = _COMPACTING_WHY.get(event.trigger, event.trigger)
            say(f"compacting the conversation ({why})…")
            return
        took = time.monotonic() - (self.compacting_since or time.monotonic())
        self.compacting_since = None
        self.retrying = False  # a summary request's retry: this line says how it went
        payload = event.entry.payload if event.entry is not None else None
        if isinstance(payload, Compaction):
            say(f"compacted: {payload.tokens_before:,} tokens summarized in {took:.0f} s")
        else:
            say("compaction failed or stopped; nothing was summarized")

    def _tool(self, event: ToolChanged) -> None:
        activity = event.activity
        took = f" in {activity.elapsed:.1f} s" if activity.elapsed is not None else ""
        if activity.state == "running":
            self.new_turn = True
            tool_line(f"{activity.name} {_arguments_summary(activity.call)}")
        elif activity.state == "done":
            self.new_turn = True
            tool_line(f"{activity.name} done{took}")
        elif activity.state == "error":
            self.new_turn = True
            first = (activity.result.text if activity.result else "").strip().splitlines()
            tool_line(f"{activity.name} failed{took}: {first[0] if first else 'no details'}")
        # denied: the approval rule said why

    def close(self) -> None:
        """The answer is over: what the cleaner held back, and a final newline."""
        self._write(self.cleaner.flush() if self.cleaner else "")
        if not self.wrote_newline:
            self.out.write("\n")
            self.wrote_newline = True


class JsonLines:
    """Every event as one JSON object per line."""

    def __init__(self, out: PipeSafeStdout, session_id: str) -> None:
        self.out = out
        self._line({"type": "session", "id": session_id})

    def __call__(self, event: Event) -> None:
        data = event_json(event)
        if data is not None:
            self._line(data)

    def _line(self, data: dict) -> None:
        self.out.write(json_for_terminal(data, indent=None) + "\n")

    def close(self) -> None:
        """Nothing is held back."""


def print_mode_approval(tools: ToolRegistry, allow_tools: str | None) -> ApproveFn:
    """Print mode cannot ask: side-effect tools run only when named in
    ``--allow-tools`` (comma-separated); every denial gets a one-line note on
    stderr, and so does a name that is no built-in tool."""
    allowed = {name.strip() for name in (allow_tools or "").split(",") if name.strip()}
    unknown = sorted(n for n in allowed if "." not in n and tools.find(n) is None)
    if unknown:
        say(f"--allow-tools: no built-in tool named {', '.join(unknown)}")

    async def approve(call, tool, preview: str) -> Approval:
        if tool.name in allowed or tool.wire_name in allowed:
            return Approval("once")
        say(
            f"denied {tool.name}: tools with side effects need --allow-tools {tool.name} in print mode"
        )
        return Approval(
            "deny",
            f"print mode runs {tool.name} only when the user passes --allow-tools {tool.name}",
        )

    return approve


def say(text: str) -> None:
    print(f"tangents: {_one_line(text)}", file=sys.stderr, flush=True)


def tool_line(text: str) -> None:
    print(f"tool: {_one_line(text)}", file=sys.stderr, flush=True)


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(strip_control(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _arguments_summary(call) -> str:
    text = call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)
    return _one_line(text, 120)
