"""``tangents -p "question" --compare MODEL,MODEL[,...]``: several answers on stdout.

A thin consumer of :meth:`core.chat.conversation.Conversation.compare`: the
question is saved once, every model answers it at once, and each reply is
saved as an alternative. Stdout gets the replies one after another, each
under a ``## model`` heading (:class:`InOrder`: the first streams as it
arrives, the others wait in memory until the ones before them are written),
or with ``--json`` every event as a JSON line, the columns' tagged with
``column`` and ``model`` (:class:`~tui.modes.print_output.JsonLines`). A model
that fails gets a one-line note on stderr and the exit status is 1; the
others are still written and saved. A missing key stops before anything is
written. A closed stdout (``| head -1``) ends the writing quietly (exit 141);
every reply is still saved. The position is left on the first model's reply
(``tangents -c`` continues from it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from core.chat.events import ColumnEvent, ColumnFinished, Event
from core.chat.fanout import FanOutError, distinct_models
from core.providers.base import TextDelta
from core.sanitize import StreamCleaner
from tui.modes.bootstrap import Launch, UsageError, fail, open_store, resolve_session
from tui.modes.print_output import JsonLines, PipeSafeStdout, say


def compare_models(raw: str) -> list[str]:
    """The models of ``--compare a,b``; :class:`UsageError` unless 2-4 distinct ones."""
    try:
        return distinct_models(raw.split(","))
    except FanOutError as error:
        raise UsageError(f"--{error}, comma-separated") from None


class InOrder:
    """Writes concurrent replies one after another: the column being written
    streams, later ones are held until every column before them has ended."""

    def __init__(self, models: list[str], out: PipeSafeStdout) -> None:
        self.models = models
        self.out = out
        self.cleaners = [StreamCleaner() if sys.stdout.isatty() else None for _ in models]
        self.held: list[list[str]] = [[] for _ in models]
        self.ended = [False] * len(models)
        self.current = -1
        self._next()

    def __call__(self, event: Event) -> None:
        if isinstance(event, ColumnEvent) and isinstance(event.event, TextDelta):
            cleaner = self.cleaners[event.column]
            text = cleaner.feed(event.event.text) if cleaner else event.event.text
            if event.column == self.current:
                self.out.write(text)
            else:
                self.held[event.column].append(text)
        elif isinstance(event, ColumnFinished):
            cleaner = self.cleaners[event.column]
            self.held[event.column].append((cleaner.flush() if cleaner else "") + "\n")
            self.ended[event.column] = True
            while self.current < len(self.models) and self.ended[self.current]:
                self._next()

    def _next(self) -> None:
        """Write the next column's heading and what it has so far."""
        if self.current >= 0:
            self.out.write("".join(self.held[self.current]))
        self.current += 1
        if self.current < len(self.models):
            heading = "" if self.current == 0 else "\n"
            self.out.write(f"{heading}## {self.models[self.current]}\n\n")
            self.out.write("".join(self.held[self.current]))
            self.held[self.current].clear()

    def close(self) -> None:
        """Every column has ended by now (the fan-out saves each one)."""


async def run_compare(
    args: argparse.Namespace, launch: Launch, prompt: str, models: list[str]
) -> int:
    store = await open_store(launch.db_path)
    try:
        session = await resolve_session(store, args, cwd=os.getcwd(), writable=True)
        conversation = launch.conversation(
            session, model=models[0], thinking=args.thinking, system=args.system
        )
        for model in models:
            no_key = conversation.target_for(model).missing_key()
            if no_key is not None:
                return fail(f"{model}: {no_key}", 2)  # before anything is written
        out = PipeSafeStdout()
        printer = JsonLines(out, session.id) if args.json_events else InOrder(models, out)
        conversation.subscribe(printer)
        conversation.check_endpoint(models)  # before anything is written
        await conversation.add_message(prompt)
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            result = await conversation.compare(models)
        except asyncio.CancelledError:
            print(file=sys.stderr)
            return fail("stopped; the partial answers were saved", 130)
        printer.close()
        if out.closed:
            return 141  # like other Unix tools whose reader went away
        failed = [c for c in result.columns if c.error]
        for column in failed:
            say(f"{column.model}: {column.error}")
        if failed:
            return fail(f"{len(failed)} of {len(models)} failed (session {session.id})", 1)
        return 0
    finally:
        await store.close()
