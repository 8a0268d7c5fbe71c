"""``tangents -p``: one exchange on stdout, saved like any other.

The user's message is saved before the request, so a failed request can be
retried with ``tangents -c -p``; the answer is saved when it ends (or is cut).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from core.messages import user_text
from core.providers.base import ProviderError, TextDelta
from core.sanitize import strip_control
from tui.bootstrap import Launch, UsageError, fail, open_store, resolve_launch, resolve_session


def read_prompt(args: argparse.Namespace) -> str:
    if args.prompt == "-":
        if sys.stdin.isatty():
            raise UsageError("-p needs a prompt (or text on standard input)")
        return sys.stdin.read()
    return args.prompt


def run_print_mode(args: argparse.Namespace) -> int:
    try:
        prompt = read_prompt(args)
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        launch = resolve_launch(args)
        return asyncio.run(_run(args, launch, prompt))
    except UsageError as error:
        return fail(str(error))
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace, launch: Launch, prompt: str) -> int:
    from core.chat import run_turn

    store = await open_store(launch.db_path)
    try:
        session = await resolve_session(store, args, cwd=os.getcwd())
        path_model, path_thinking = session.model(launch.model, launch.thinking)
        model = args.model or path_model
        thinking = args.thinking or path_thinking
        system = args.system or (None if session.path else launch.settings.system)
        preamble = [session.system_change_for(system), session.model_change_for(model, thinking)]
        await session.append_many([p for p in preamble if p is not None] + [user_text(prompt)])

        out = sys.stdout
        sanitize = out.isatty()
        wrote_newline = True

        def on_event(event) -> None:
            nonlocal wrote_newline
            if isinstance(event, TextDelta) and event.text:
                text = strip_control(event.text) if sanitize else event.text
                out.write(text)
                out.flush()
                wrote_newline = text.endswith("\n")

        def on_wait(seconds: float, error: ProviderError) -> None:
            print(f"tangents: {error.message}; retrying in {seconds:.0f} s", file=sys.stderr)

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            result = await run_turn(
                session, launch.settings, model=model, thinking=thinking,
                api_base=launch.api_base, on_event=on_event, on_wait=on_wait,
            )
        except asyncio.CancelledError:
            print(file=sys.stderr)
            return fail("stopped; the partial answer was saved", 130)
        if not wrote_newline:
            out.write("\n")
            out.flush()
        if result.error is not None:
            return fail(f"{result.error.message} (session {session.id})", 1)
        if result.message.stop_reason == "interrupted":
            return fail(f"the answer was cut off; what arrived was saved (session {session.id})", 1)
        return 0
    finally:
        await store.close()
