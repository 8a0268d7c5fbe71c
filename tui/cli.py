"""The ``tangents`` command line: the TUI, print mode and session commands.

Only the standard library and ``core`` are imported here, so ``--help`` and
``--version`` answer at once; Textual, storage and provider SDKs are imported
by the mode that needs them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from core import __version__
from core.sessions.entries import DEFAULT_NOTE_DEPTH, THINKING_LEVELS
from core.sessions.persistence import SESSION_STATES

EXPORT_FORMATS = ("json", "markdown", "openai", "mplp", "pi", "html")
IMPORT_FORMATS = (
    "auto",
    "tangents",
    "openai",
    "pi",
    "claude",
    "mplp",
)  # core.formats.IMPORT_FORMATS plus auto


def _global_options(parser: argparse.ArgumentParser, suppress: bool) -> None:
    """Options accepted before and after a subcommand."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--db",
        metavar="PATH",
        default=default,
        help="database file (default: TANGENTS_HOME or the user data directory)",
    )
    parser.add_argument(
        "--config",
        metavar="PATH",
        default=default,
        help="config file (TOML; default: the user config directory)",
    )
    parser.add_argument(
        "--model",
        "-m",
        metavar="MODEL",
        default=default,
        help="model, in litellm form: anthropic/..., openai/..., ollama/..., demo",
    )
    parser.add_argument(
        "--api-base",
        metavar="URL",
        default=default,
        help="base URL of an OpenAI-compatible endpoint (model name says the provider, e.g. openai/my-model)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tangents",
        description="A terminal chat client for LLMs where every conversation is a tree.",
        epilog="Run without -p to open the chat app. 'tangents sessions --help' for session commands.",
    )
    parser.add_argument("--version", action="version", version=f"tangents {__version__}")
    _global_options(parser, suppress=False)
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        nargs="?",
        const="-",
        default=None,
        help="print mode: send PROMPT (or stdin with '-'), stream the answer to stdout, save it, exit",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="continue the most recent session",
    )
    parser.add_argument("-r", "--resume", action="store_true", help="open the session picker")
    parser.add_argument("--session", metavar="ID", help="continue the session with this id")
    parser.add_argument(
        "--from",
        dest="from_entry",
        metavar="ENTRY_ID",
        help="continue from this entry of the session, starting a branch",
    )
    parser.add_argument("--system", metavar="TEXT", help="system prompt")
    parser.add_argument("--thinking", choices=THINKING_LEVELS, help="thinking level")
    parser.add_argument(
        "--compare",
        metavar="MODELS",
        help="print mode: 2-4 comma-separated models answer at once, each saved as an alternative",
    )
    parser.add_argument(
        "--json",
        dest="json_events",
        action="store_true",
        help="print mode: write every event (text, thinking, tool calls, saved entries) as a JSON line",
    )
    parser.add_argument(
        "--max-time",
        metavar="SECONDS",
        help="print mode: end a reply that takes longer, saving what arrived (setting: max_time)",
    )
    parser.add_argument(
        "--allow-tools",
        metavar="NAMES",
        help="print mode: comma-separated side-effect tools allowed to run",
    )
    parser.add_argument(
        "-a",
        "--attach",
        dest="attachments",
        metavar="FILE",
        action="append",
        help="print mode: attach an image, audio file (MP3, WAV, Ogg, FLAC, M4A) or PDF (repeatable)",
    )
    parser.add_argument(
        "--extra-root",
        dest="extra_roots",
        metavar="DIR",
        action="append",
        help="let the tools use DIR besides the working directory (repeatable; setting: extra_roots)",
    )

    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    sessions = commands.add_parser(
        "sessions",
        help="list, show, search, export, import, rename, archive, delete, compact, note "
        "and set the status of sessions",
    )
    _global_options(sessions, suppress=True)
    actions = sessions.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="list sessions, newest first")
    _global_options(listing, suppress=True)
    listing.add_argument("--json", action="store_true", help="JSON output")
    listing.add_argument("--all", action="store_true", help="include archived sessions")
    listing.add_argument("--limit", type=int, default=100)

    show = actions.add_parser(
        "show",
        help="an overview of one session",
        description="Title, dates, entries and messages, branches and leaves, compactions, labels, "
        "tokens and cost per model, and tool calls by name, over the whole tree.",
    )
    _global_options(show, suppress=True)
    show.add_argument("id", metavar="ID")
    show.add_argument("--json", action="store_true", help="JSON output")

    export = actions.add_parser(
        "export",
        help="write a session to stdout",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write a session to stdout.",
        epilog=(
            "formats:\n"
            "  json      the whole tree, lossless (with image bytes): 'sessions import' gives it back\n"
            "  markdown  the current branch, readable\n"
            "  openai    the current branch as an OpenAI chat-completions messages array\n"
            "  mplp      the current branch as an MPLP dialog document\n"
            "  pi        the whole tree as a pi coding-agent session file (.jsonl, version 3)\n"
            "  html      one self-contained web page: the current branch as a chat, the whole\n"
            "            tree in a sidebar to switch alternatives and open other branches"
        ),
    )
    _global_options(export, suppress=True)
    export.add_argument("id", metavar="ID")
    export.add_argument(
        "--all-branches",
        action="store_true",
        help="markdown: every branch after the current one (alternatives, edits, compared replies)",
    )
    export.add_argument(
        "--format",
        "-f",
        choices=EXPORT_FORMATS,
        default="json",
        help="output format (default: json)",
    )

    importing = actions.add_parser(
        "import",
        help="read a session from a file (Tangents JSON, OpenAI messages, pi, Claude Code session, MPLP dialog)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Import a session from FILE ('-' for stdin) and print its new id and what it holds.",
        epilog=(
            "formats (auto-detected unless --format is given):\n"
            "  tangents  a 'sessions export --format json' document: the same session, same ids\n"
            "  openai    a chat-completions messages array (or an object with 'messages'): a linear session\n"
            "  pi        a pi coding-agent session file (.jsonl): its tree, compactions, branch\n"
            "            summaries, model changes and labels (a fragment without its header too)\n"
            "  claude    a Claude Code project session (.jsonl): its tree, tool calls, thinking,\n"
            "            images; sub-agent runs as branches; the summary as the title\n"
            "  mplp      an MPLP dialog (as 'export --format mplp' writes): checked against its\n"
            "            schema; '[Name] ' agent messages come back as that agent's replies\n"
            "\n"
            "A file that cannot be imported whole is refused with the line and the reason;\n"
            "nothing is written. A Tangents export whose session is already in the database is\n"
            "refused too, unless --new-ids imports it as a copy under fresh ids."
        ),
    )
    _global_options(importing, suppress=True)
    importing.add_argument("file", metavar="FILE")
    importing.add_argument(
        "--format",
        "-f",
        choices=IMPORT_FORMATS,
        default="auto",
        help="input format (default: auto)",
    )
    importing.add_argument(
        "--new-ids",
        action="store_true",
        help="give a Tangents export fresh session and entry ids (import a copy)",
    )
    importing.add_argument("--json", action="store_true", help="JSON output")

    search = actions.add_parser(
        "search",
        help="full-text search over every session",
        description="Full-text search over every session's messages and tool results: every word must match, "
        "the last one as a prefix. Best matches first; when a query matches more than 1,000 messages, "
        "the newest 1,000 are ranked.",
    )
    _global_options(search, suppress=True)
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--json", action="store_true", help="JSON output")
    search.add_argument("--limit", type=int, default=50)

    rename = actions.add_parser("rename", help="set a session's title")
    _global_options(rename, suppress=True)
    rename.add_argument("id", metavar="ID")
    rename.add_argument("title", metavar="TITLE")
    for name, what in (
        ("archive", "hide a session from the list and the picker (it stays searchable with --all)"),
        ("unarchive", "show an archived session again"),
    ):
        archiving = actions.add_parser(name, help=what)
        _global_options(archiving, suppress=True)
        archiving.add_argument("id", metavar="ID")
    delete = actions.add_parser(
        "delete",
        help="delete a session for good",
        description="Delete a session with its messages, branches, labels and the images no other session shows. "
        "Asks first on a terminal; elsewhere --yes is required.",
    )
    _global_options(delete, suppress=True)
    delete.add_argument("id", metavar="ID")
    delete.add_argument("--yes", "-y", action="store_true", help="do not ask")

    note = actions.add_parser(
        "note",
        help="pin a note at a depth of every later request of a session",
        description="Save a note on the session's current branch: every later request carries "
        "it as a '[Note: TEXT]' user item with DEPTH messages after it (as the model sees "
        "them). A newer note replaces it; --off removes it.",
    )
    _global_options(note, suppress=True)
    note.add_argument("id", metavar="ID")
    note.add_argument("text", metavar="TEXT", nargs="?")
    note.add_argument(
        "--depth",
        type=int,
        default=DEFAULT_NOTE_DEPTH,
        help=f"messages after the note (default: {DEFAULT_NOTE_DEPTH})",
    )
    note.add_argument("--off", action="store_true", help="remove the note")

    status = actions.add_parser(
        "status",
        help="set a session's status: active, paused, completed or cancelled",
        description="Only an active session takes new messages; the others open read-only "
        "until set back to active. Archiving is separate.",
    )
    _global_options(status, suppress=True)
    status.add_argument("id", metavar="ID")
    status.add_argument("state", metavar="STATE", choices=SESSION_STATES)

    compact = actions.add_parser(
        "compact", help="summarize a session's older messages to free its context"
    )
    _global_options(compact, suppress=True)
    compact.add_argument("id", metavar="ID")
    compact.add_argument(
        "--focus", metavar="TEXT", help="what the summary should pay most attention to"
    )

    sync = commands.add_parser(
        "sync",
        help="exchange sessions with your other machines through a shared folder",
        description="Send this machine's new sessions, entries and changes to the folder and take "
        "those of the other machines (one shot). The folder is one a sync engine (Syncthing, "
        "Dropbox, OneDrive, iCloud Drive) or you (a git work tree) copies between machines; "
        "each machine writes only its own files under DIR/tangents/.",
    )
    _global_options(sync, suppress=True)
    sync.add_argument(
        "--folder", metavar="DIR", help="the shared folder (setting: folder in [sync])"
    )
    sync.add_argument(
        "--key-env",
        metavar="NAME",
        help="encrypt the folder with the passphrase in environment variable NAME "
        "(setting: key_env in [sync])",
    )
    sync.add_argument("--json", action="store_true", help="JSON output")

    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "sessions":
        from tui.modes.session_commands import run_sessions_command

        return run_sessions_command(args)
    if args.command == "sync":
        from tui.modes.sync_command import run_sync_command

        return run_sync_command(args)
    if args.prompt is not None:
        from tui.modes.print_mode import run_print_mode

        return run_print_mode(args)
    if args.compare or args.json_events or args.attachments:
        from tui.modes.bootstrap import fail

        if args.json_events:
            return fail("--json goes with -p (tangents --json -p 'a question')")
        if args.attachments:
            return fail("-a goes with -p (tangents -p 'a question' -a FILE)")
        return fail("--compare goes with -p (in the app: /compare MODEL MODEL)")
    from tui.modes.launch import run_app

    return run_app(args)


if __name__ == "__main__":
    sys.exit(main())
