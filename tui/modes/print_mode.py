"""``tangents -p``: one exchange on stdout, saved like any other.

A thin consumer of :class:`core.chat.conversation.Conversation`: the user's message
is saved before the request (a failed one can be retried with
``tangents -c -p``), the answer when it ends (or is cut), whatever happens to
stdout. The answer goes to stdout as text (:class:`TextPrinter`) or, with
``--json``, every event as a JSON line (:class:`JsonLines`).

With ``--compare``, several models answer at once (:mod:`tui.modes.print_compare`).

The model gets the built-in tools (and configured MCP servers). Read-only
tools run; tools with side effects run only when named in ``--allow-tools
NAME,...`` (a one-line note on stderr for each denial).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from core.providers import http_clients
from core.sessions.attachments import Attachment, AttachmentError
from tui.modes.bootstrap import (
    Launch,
    UsageError,
    fail,
    one_line_errors,
    open_store,
    resolve_launch,
    resolve_session,
)
from tui.modes.print_output import JsonLines, PipeSafeStdout, TextPrinter, print_mode_approval


def read_prompt(args: argparse.Namespace) -> str:
    if args.prompt == "-":
        if sys.stdin.isatty():
            raise UsageError("-p needs a prompt (or text on standard input)")
        return sys.stdin.read()
    return args.prompt


def read_attachments(paths: Sequence[str]) -> list[Attachment]:
    """The files of ``-a``, each checked (kind, size) before anything is sent."""
    from core.sessions.file_attachments import load_attachment

    try:
        return [load_attachment(Path(path)) for path in paths]
    except AttachmentError as error:
        raise UsageError(str(error)) from None


def run_print_mode(args: argparse.Namespace) -> int:
    try:
        prompt = read_prompt(args)
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        attachments = read_attachments(args.attachments or ())
        launch = resolve_launch(args)
        if args.compare:
            from tui.modes.print_compare import compare_models, run_compare

            if attachments:
                raise UsageError("--compare takes no attachments yet")
            return asyncio.run(run_compare(args, launch, prompt, compare_models(args.compare)))
        return asyncio.run(_run(args, launch, prompt, attachments))
    except one_line_errors() as error:
        return fail(str(error))
    except KeyboardInterrupt:
        return 130


async def _run(
    args: argparse.Namespace, launch: Launch, prompt: str, attachments: Sequence[Attachment]
) -> int:
    from core.chat.front_end import ToolUse
    from core.providers.capabilities import refusal
    from core.providers.registry import warm_up
    from core.sessions.sniff import kind_of
    from core.tools import ToolRegistry

    store = await open_store(launch.db_path)
    tools: ToolRegistry | None = None
    try:
        session = await resolve_session(store, args, cwd=os.getcwd(), writable=True)
        conversation = launch.conversation(
            session, model=args.model, thinking=args.thinking, system=args.system
        )
        conversation.check_endpoint()  # before a key is looked for or anything written
        for model in conversation.models_for(prompt):
            if (no_key := conversation.target_for(model).missing_key()) is not None:
                return fail(no_key, 2)  # before anything is written
        kinds = (kind_of(a.blob.media_type) for a in attachments)
        refused = refusal(conversation.model, kinds, launch.settings)
        if refused is not None:
            return fail(refused, 2)  # before anything is written
        out = PipeSafeStdout()
        printer = JsonLines(out, session.id) if args.json_events else TextPrinter(out)
        conversation.subscribe(printer)
        tools = ToolRegistry.default(launch.settings, cwd=os.getcwd())
        # MCP servers and the provider's SDK start together: the reply's wait
        # for servers still starting overlaps with loading the SDK.
        tools.start_servers()
        target = conversation.target
        warm_up(target.model, target.api_base)
        approve = print_mode_approval(tools, args.allow_tools)

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            result = await conversation.send(prompt, attachments, tools=ToolUse(tools, approve))
        except asyncio.CancelledError:
            printer.close()
            print(file=sys.stderr)
            return fail("stopped; the partial answer was saved", 130)
        printer.close()
        if result.error is not None:
            return fail(f"{result.error.message} (session {session.id})", 1)
        if result.stop == "step_limit":
            return fail(
                f"stopped after {result.steps} tool steps (max_tool_steps) while the model was still "
                f"calling tools; continue with -c (session {session.id})",
                1,
            )
        if result.stop == "call_limit":
            return fail(
                f"stopped: the reply called more tools than max_calls_per_reply allows; "
                f"continue with -c (session {session.id})",
                1,
            )
        if result.message.stop_reason == "length":
            why = result.message.error or "the answer reached the output token limit"
            return fail(f"{why}; the answer is incomplete (session {session.id})", 1)
        if result.message.stop_reason == "interrupted":
            return fail(f"the answer was cut off; what arrived was saved (session {session.id})", 1)
        return 0
    finally:
        if tools is not None:
            await tools.aclose()
        await http_clients.aclose()
        await store.close()
