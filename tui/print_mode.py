"""``tangents -p``: one exchange on stdout, saved like any other.

The user's message is saved before the request, so a failed request can be
retried with ``tangents -c -p``; the answer is saved when it ends (or is cut).

The model gets the built-in tools (and configured MCP servers) through the
agent loop. Read-only tools run; tools with side effects run only when named
in ``--allow-tools NAME,...`` (a one-line note on stderr for each denial). Tool
activity goes to stderr as ``tool: ...`` lines, the answer to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys

from core.messages import user_text
from core.providers.base import ProviderError, TextDelta
from core.providers.keys import missing_key
from core.sanitize import StreamCleaner, strip_control
from tui.bootstrap import (
    Launch,
    UsageError,
    fail,
    one_line_errors,
    open_store,
    resolve_launch,
    resolve_session,
)


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
    except one_line_errors() as error:
        return fail(str(error))
    except KeyboardInterrupt:
        return 130


async def _run(args: argparse.Namespace, launch: Launch, prompt: str) -> int:
    from core.agent import run_agent
    from core.tools import ToolRegistry

    store = await open_store(launch.db_path)
    tools = None
    try:
        session = await resolve_session(store, args, cwd=os.getcwd())
        path_model, path_thinking = session.model(launch.model, launch.thinking)
        model = args.model or path_model
        thinking = args.thinking or path_thinking
        no_key = missing_key(model, launch.settings, launch.api_base)
        if no_key is not None:
            return fail(no_key, 2)  # before anything is written
        system = args.system or (None if session.path else launch.settings.system)
        preamble = [session.system_change_for(system), session.model_change_for(model, thinking)]
        await session.append_many([p for p in preamble if p is not None] + [user_text(prompt)])

        out = PipeSafeStdout()
        cleaner = StreamCleaner() if sys.stdout.isatty() else None
        wrote_newline = True
        new_turn = False

        def on_event(event) -> None:
            nonlocal wrote_newline, new_turn
            if isinstance(event, TextDelta) and event.text:
                text = cleaner.feed(event.text) if cleaner else event.text
                if not text:
                    return
                if new_turn and not wrote_newline:
                    out.write("\n")
                new_turn = False
                out.write(text)
                wrote_newline = text.endswith("\n")

        def on_wait(seconds: float, error: ProviderError) -> None:
            print(f"tangents: {error.message}; retrying in {seconds:.0f} s", file=sys.stderr)

        tools = ToolRegistry.default(launch.settings, cwd=os.getcwd())
        allowed = allowed_tools(args)
        unknown = [n for n in allowed if "." not in n and tools.find(n) is None]
        if unknown:
            print(
                f"tangents: --allow-tools: no built-in tool named {', '.join(unknown)}",
                file=sys.stderr,
            )
        approve = print_mode_approval(allowed)

        def on_tool_start(activity) -> None:
            nonlocal new_turn
            new_turn = True
            tool_line(f"{activity.name} {_arguments_summary(activity.call)}")

        def on_tool_end(activity) -> None:
            nonlocal new_turn
            new_turn = True
            if activity.state == "denied":
                return  # the approval callback said why
            took = f" in {activity.elapsed:.1f} s" if activity.elapsed is not None else ""
            if activity.state == "done":
                tool_line(f"{activity.name} done{took}")
            else:
                first = (activity.result.text if activity.result else "").strip().splitlines()
                tool_line(f"{activity.name} failed{took}: {first[0] if first else 'no details'}")

        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            result = await run_agent(
                session,
                launch.settings,
                model=model,
                thinking=thinking,
                api_base=launch.api_base,
                tools=tools,
                approve=approve,
                on_event=on_event,
                on_wait=on_wait,
                on_tool_start=on_tool_start,
                on_tool_end=on_tool_end,
                on_notice=lambda text: print(f"tangents: {_one_line(text)}", file=sys.stderr),
            )
        except asyncio.CancelledError:
            print(file=sys.stderr)
            return fail("stopped; the partial answer was saved", 130)
        rest = cleaner.flush() if cleaner else ""
        if rest:
            out.write(rest)
            wrote_newline = rest.endswith("\n")
        if not wrote_newline:
            out.write("\n")
        if result.error is not None:
            return fail(f"{result.error.message} (session {session.id})", 1)
        if result.stop == "step_limit":
            return fail(
                f"stopped after {result.steps} tool steps (max_tool_steps) while the model was still "
                f"calling tools; continue with -c (session {session.id})",
                1,
            )
        if result.message.stop_reason == "interrupted":
            return fail(f"the answer was cut off; what arrived was saved (session {session.id})", 1)
        return 0
    finally:
        if tools is not None:
            await tools.aclose()
        await store.close()


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


def allowed_tools(args: argparse.Namespace) -> set[str]:
    """Names given to ``--allow-tools`` (comma-separated, repeatable)."""
    raw = getattr(args, "allow_tools", None) or ""
    return {name.strip() for name in raw.split(",") if name.strip()}


def print_mode_approval(allowed: set[str]):
    """Print mode cannot ask: side-effect tools run only when named in
    ``--allow-tools``; every denial gets a one-line note on stderr."""
    from core.tools import Approval

    async def approve(call, tool, preview: str) -> Approval:
        if tool.name in allowed or tool.wire_name in allowed:
            return Approval("once")
        print(
            f"tangents: denied {tool.name}: tools with side effects need --allow-tools {tool.name} in print mode",
            file=sys.stderr,
        )
        return Approval(
            "deny",
            f"print mode runs {tool.name} only when the user passes --allow-tools {tool.name}",
        )

    return approve


def tool_line(text: str) -> None:
    print(f"tool: {_one_line(text)}", file=sys.stderr, flush=True)


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(strip_control(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _arguments_summary(call) -> str:
    import json

    text = call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)
    return _one_line(text, 120)
