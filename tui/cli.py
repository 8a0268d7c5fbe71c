"""The ``tangents`` command line: the TUI, print mode and session commands.

Only the standard library and ``core`` are imported here, so ``--help`` and
``--version`` answer at once; Textual, storage and provider SDKs are imported
by the mode that needs them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from core import __version__
from core.entries import THINKING_LEVELS

EXPORT_FORMATS = ("json", "markdown")


def _global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """Options accepted before and after a subcommand."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--db", metavar="PATH", default=default, help="database file (default: TANGENTS_HOME or the user data directory)")
    parser.add_argument("--config", metavar="PATH", default=default, help="config file (TOML; default: the user config directory)")
    parser.add_argument("--model", "-m", metavar="MODEL", default=default, help="model, in litellm form: anthropic/..., openai/..., ollama/..., demo")
    parser.add_argument("--api-base", metavar="URL", default=default, help="base URL of an OpenAI-compatible endpoint (model name says the provider, e.g. openai/my-model)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tangents",
        description="A terminal chat client for LLMs where every conversation is a tree.",
        epilog="Run without -p to open the chat app. 'tangents sessions --help' for session commands.",
    )
    parser.add_argument("--version", action="version", version=f"tangents {__version__}")
    _global_options(parser, suppress=False)
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT", nargs="?", const="-", default=None,
                        help="print mode: send PROMPT (or stdin with '-'), stream the answer to stdout, save it, exit")
    parser.add_argument("-c", "--continue", dest="continue_", action="store_true", help="continue the most recent session")
    parser.add_argument("-r", "--resume", action="store_true", help="open the session picker")
    parser.add_argument("--session", metavar="ID", help="continue the session with this id")
    parser.add_argument("--from", dest="from_entry", metavar="ENTRY_ID", help="continue from this entry of the session, starting a branch")
    parser.add_argument("--system", metavar="TEXT", help="system prompt")
    parser.add_argument("--thinking", choices=THINKING_LEVELS, help="thinking level")
    parser.add_argument("--allow-tools", metavar="NAMES", help="print mode: comma-separated side-effect tools allowed to run")

    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sessions = commands.add_parser("sessions", help="list, search and export sessions")
    _global_options(sessions, suppress=True)
    actions = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="list sessions, newest first")
    _global_options(listing, suppress=True)
    listing.add_argument("--json", action="store_true", help="JSON output")
    listing.add_argument("--all", action="store_true", help="include archived sessions")
    listing.add_argument("--limit", type=int, default=100)

    export = actions.add_parser("export", help="write a session to stdout")
    _global_options(export, suppress=True)
    export.add_argument("id", metavar="ID")
    export.add_argument("--format", "-f", choices=EXPORT_FORMATS, default="json")

    search = actions.add_parser("search", help="full-text search over every session")
    _global_options(search, suppress=True)
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--json", action="store_true", help="JSON output")
    search.add_argument("--limit", type=int, default=50)

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "sessions":
        from tui.session_commands import run_sessions_command

        return run_sessions_command(args)
    if args.prompt is not None:
        from tui.print_mode import run_print_mode

        return run_print_mode(args)
    from tui.launch import run_app

    return run_app(args)


if __name__ == "__main__":
    sys.exit(main())
