"""``tangents -p "question" --compare MODEL,MODEL[,...]``: several answers on stdout.

The question is saved once; every model answers it at once (:func:`core.fanout.fan_out`)
and each reply is saved as an alternative. Stdout gets the replies one after
another, each under a ``## model`` heading: the first streams as it arrives,
the others wait in memory until the ones before them are written. A model
that fails gets a one-line note on stderr and the exit status is 1; the
others are still written and saved. A closed stdout (``| head -1``) ends the
writing quietly (exit 141); every reply is still saved. The position is left on the first
model's reply (``tangents -c`` continues from it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import TextIO

from core.fanout import MAX_MODELS, MIN_MODELS, ColumnEvent, ColumnFinished, FanOutEvent, fan_out
from core.messages import user_text
from core.providers.base import TextDelta
from core.sanitize import strip_control
from tui.bootstrap import Launch, UsageError, fail, open_store, resolve_launch, resolve_session
from tui.print_mode import read_prompt


def compare_models(raw: str) -> list[str]:
    """The models of ``--compare a,b``; :class:`UsageError` unless 2-4 distinct ones."""
    models = list(dict.fromkeys(m.strip() for m in raw.split(",") if m.strip()))
    if not MIN_MODELS <= len(models) <= MAX_MODELS:
        raise UsageError(
            f"--compare needs {MIN_MODELS} to {MAX_MODELS} different models, comma-separated"
        )
    return models


def run_print_compare(args: argparse.Namespace) -> int:
    try:
        models = compare_models(args.compare)
        prompt = read_prompt(args)
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        launch = resolve_launch(args)
        return asyncio.run(_run(args, launch, prompt, models))
    except UsageError as error:
        return fail(str(error))
    except KeyboardInterrupt:
        return 130


class InOrder:
    """Writes concurrent replies one after another: the column being written
    streams, later ones are held until every column before them has ended."""

    def __init__(self, models: list[str], out: TextIO, sanitize: bool) -> None:
        self.models = models
        self.out = out
        self.sanitize = sanitize
        self.held: list[list[str]] = [[] for _ in models]
        self.ended: list[str | None | bool] = [False] * len(models)
        """False while streaming; then the column's error (None: none)."""
        self.current = -1
        self.failed: list[str] = []
        self.closed = False
        """Stdout was closed (``| head``): nothing more is written; the replies are still saved."""
        self._next()

    def feed(self, event: FanOutEvent) -> None:
        if isinstance(event, ColumnEvent) and isinstance(event.event, TextDelta):
            text = strip_control(event.event.text) if self.sanitize else event.event.text
            if event.column == self.current:
                self._write(text)
            else:
                self.held[event.column].append(text)
        elif isinstance(event, ColumnFinished):
            self.ended[event.column] = event.result.error
            while self.current < len(self.models) and self.ended[self.current] is not False:
                self._end(self.current)
                self._next()

    def _next(self) -> None:
        self.current += 1
        if self.current < len(self.models):
            heading = "" if self.current == 0 else "\n"
            self._write(f"{heading}## {self.models[self.current]}\n\n")
            self._write("".join(self.held[self.current]))
            self.held[self.current].clear()

    def _end(self, column: int) -> None:
        self._write("\n")
        error = self.ended[column]
        if error:
            self.failed.append(self.models[column])
            print(f"tangents: {self.models[column]}: {_one_line(str(error))}", file=sys.stderr)

    def _write(self, text: str) -> None:
        if not text or self.closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self.closed = True
            # Python flushes stdout again at exit: let that go nowhere.
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())


async def _run(args: argparse.Namespace, launch: Launch, prompt: str, models: list[str]) -> int:
    store = await open_store(launch.db_path)
    try:
        session = await resolve_session(store, args, cwd=os.getcwd())
        thinking = args.thinking or session.model(launch.model, launch.thinking)[1]
        system = args.system or (None if session.path else launch.settings.system)
        preamble = [
            session.system_change_for(system),
            session.model_change_for(models[0], thinking),
        ]
        await session.append_many([p for p in preamble if p is not None] + [user_text(prompt)])
        writer = InOrder(models, sys.stdout, sanitize=sys.stdout.isatty())
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            await fan_out(
                session,
                launch.settings,
                models,
                thinking=thinking,
                api_base=launch.api_base or launch.settings.api_base,
                on_event=writer.feed,
            )
        except asyncio.CancelledError:
            print(file=sys.stderr)
            return fail("stopped; the partial answers were saved", 130)
        if writer.closed:
            return 141  # like other Unix tools whose reader went away
        if writer.failed:
            return fail(f"{len(writer.failed)} of {len(models)} failed (session {session.id})", 1)
        return 0
    finally:
        await store.close()


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(strip_control(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
