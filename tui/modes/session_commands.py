"""``tangents sessions ...``: list, show, search, export, import, rename,
archive, delete, compact, note and status from the shell."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.formats import FormatError, ImportedSession, parse_import
from core.formats.export import export_text
from core.sanitize import json_for_terminal, strip_control
from core.sessions.entries import Compaction
from core.sessions.ids import short_id
from core.sessions.persistence import ConflictError
from core.settings import Settings
from tui.modes import session_state
from tui.modes.bootstrap import (
    Launch,
    UsageError,
    fail,
    full_id,
    one_line_errors,
    open_store,
    resolve_launch,
)

if TYPE_CHECKING:
    from core.sessions.context import Context


class ImportFailed(Exception):
    """The file was read but cannot be imported: one line, exit code 1."""


def run_sessions_command(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except one_line_errors() as error:
        return fail(str(error))
    except ImportFailed as error:
        # The reason may quote the file's own text: no escape sequence reaches the terminal.
        return fail(f"{error} (nothing was imported)".replace("\n", " "), code=1)
    except BrokenPipeError:
        return 0


async def _run(args: argparse.Namespace) -> int:
    launch = resolve_launch(args)
    # A file to import is read and checked whole before the database is opened.
    imported = _parse_file(args) if args.action == "import" else None
    store = await open_store(launch.db_path)
    try:
        if imported is not None:
            return await _import(store, imported, args)
        if getattr(args, "id", None):
            args.id = await full_id(store, "session", args.id)
        if args.action == "list":
            return await _list(store, args)
        if args.action == "show":
            return await _show(store, args, launch.settings)
        if args.action == "export":
            return await _export(store, args, launch)
        if args.action == "search":
            return await _search(store, args)
        if args.action == "compact":
            return await _compact(store, args, launch)
        if args.action in ("rename", "archive", "unarchive", "delete"):
            return await _change(store, args)
        if args.action == "note":
            return await session_state.pin_note(store, args)
        if args.action == "status":
            return await session_state.set_status(store, args)
        raise UsageError(f"unknown action {args.action!r}")
    finally:
        await store.close()


async def _list(store, args: argparse.Namespace) -> int:
    summaries = await store.list_sessions(limit=args.limit, include_archived=args.all)
    if args.json:
        rows = [
            {
                "id": s.info.id,
                "short_id": short_id(s.info.id),
                "title": s.info.title,
                "created_at": s.info.created_at,
                "updated_at": s.info.updated_at,
                "message_count": s.message_count,
                "branch_count": s.branch_count,
                "alternatives": s.alternatives,
                "model": s.model,
                "agents": list(s.agents),
                "archived": s.info.archived,
                "status": s.info.status,
            }
            for s in summaries
        ]
        _print_json(rows)
        return 0
    if not summaries:
        print("No sessions yet. Start one with: tangents", file=sys.stderr)
        return 0
    for s in summaries:
        title = strip_control(s.info.title or "(untitled)")
        state = "" if s.info.active else f"[{s.info.status}] "
        print(
            f"{short_id(s.info.id)}  {s.info.updated_at[:19].replace('T', ' ')}  {s.message_count:>5} msg  "
            f"{state}{title}"
        )
    return 0


async def _show(store, args: argparse.Namespace, settings: Settings) -> int:
    from core.chat.target import is_trusted
    from core.formats.overview import load_overview, overview_text
    from tui.modes.session_windows import model_windows

    info = await store.get_session(args.id)
    if info is None:
        raise UsageError(f"no session with id {args.id!r}")
    overview = await load_overview(store, info)
    untrusted = frozenset(url for url in overview.endpoints if not is_trusted(url, settings))
    overview = replace(overview, untrusted=untrusted)
    endpoint = overview.endpoints[-1] if overview.endpoints else None
    models = [m.model for m in overview.models]
    windows = await model_windows(store, models, endpoint, settings)
    if args.json:
        _print_json({**overview.to_dict(), "windows": [w.to_dict() for w in windows]})
    else:
        text = overview_text(overview) + "".join(w.line() for w in windows)
        sys.stdout.write(strip_control(text))
    return 0


async def _export(store, args: argparse.Namespace, launch: Launch) -> int:
    info = await store.get_session(args.id)
    if info is None:
        raise UsageError(f"no session with id {args.id!r}")
    if args.all_branches and args.format != "markdown":
        raise UsageError(
            "--all-branches goes with --format markdown (json always holds every branch)"
        )
    # Safe on a terminal in every format (see core.formats.export).
    context = await _next_context(store, info, launch) if args.format == "openai" else None
    text = await export_text(
        store, info, args.format, all_branches=args.all_branches, context=context
    )
    sys.stdout.write(text)
    return 0


async def _next_context(store, info, launch: Launch) -> Context:
    """What the session's next request sends, as print mode or the app would
    send it: the same model, endpoint, window and built-in tools."""
    from core.sessions.session import Session
    from core.tools import ToolRegistry

    session = await Session.open(store, info.id)
    conversation = launch.conversation(session)
    await conversation.learn_window()
    return conversation.next_context(ToolRegistry.default(launch.settings, cwd=os.getcwd()))


def _print_json(document) -> None:
    print(json_for_terminal(document))


def _parse_file(args: argparse.Namespace) -> ImportedSession:
    name = args.file
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).expanduser().read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{name}: no such file") from None
    except OSError as error:
        raise UsageError(f"{name}: cannot read it ({error.strerror or error})") from None
    label = "stdin" if name == "-" else name
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ImportFailed(f"cannot import {label}: line {line}: not UTF-8 text") from None
    try:
        return parse_import(text, args.format, new_ids=args.new_ids)
    except FormatError as error:
        raise ImportFailed(f"cannot import {label}: {error}") from None


async def _import(store, imported: ImportedSession, args: argparse.Namespace) -> int:
    info = imported.info
    try:
        await store.import_session(info, imported.entries, imported.labels, imported.blobs)
    except ConflictError as error:
        hint = (
            "; --new-ids imports a copy"
            if imported.format == "tangents" and not args.new_ids
            else ""
        )
        raise ImportFailed(f"cannot import {args.file}: {error}{hint}") from None
    counts = imported.counts()
    if args.json:
        _print_json(
            {
                "id": info.id,
                "format": imported.format,
                "title": info.title,
                **counts,
                "notes": list(imported.notes),
            }
        )
        return 0
    for note in imported.notes:
        # A note may quote the file (an unknown entry type, a media type).
        print(f"note: {_one_line(note)}", file=sys.stderr)
    title = strip_control(info.title or "(untitled)")
    print(f"Imported session {info.id} ({imported.format}): {title}")
    held = ", ".join(_count(counts[key], word) for key, word in _HELD)
    found = ", ".join(_count(counts[key], word) for key, word in _FOUND)
    print(f"  {_count(counts['entries'], 'entry')}: {held}; {found}")
    return 0


_HELD = (
    ("messages", "message"),
    ("compactions", "compaction"),
    ("branch_summaries", "branch summary"),
    ("model_changes", "model change"),
)
_FOUND = (("branches", "branch"), ("labels", "label"), ("images", "image"))


def _count(number: int, word: str) -> str:
    if number == 1:
        return f"1 {word}"
    plural = (
        word[:-1] + "ies"
        if word.endswith("y")
        else word + "es"
        if word.endswith(("ch", "sh"))
        else word + "s"
    )
    return f"{number} {plural}"


async def _search(store, args: argparse.Namespace) -> int:
    hits = await store.search(args.query, limit=args.limit)
    if args.json:
        rows = [
            {
                "session_id": h.session_id,
                "entry_id": h.entry_id,
                "title": h.title,
                "snippet": h.snippet.replace("\x02", "").replace("\x03", ""),
                "rank": h.rank,
                "updated_at": h.updated_at,
            }
            for h in hits
        ]
        _print_json(rows)
        return 0
    if not hits:
        print(f"No matches for {args.query!r}.", file=sys.stderr)
        return 1
    bold = sys.stdout.isatty()
    for h in hits:
        snippet = _highlight(h.snippet, bold)
        title = strip_control(h.title or "(untitled)")
        print(f"{short_id(h.session_id)}  {title}  · entry {short_id(h.entry_id)}\n    {snippet}")
    return 0


def _highlight(snippet: str, bold: bool) -> str:
    """Sanitize a search snippet onto one line, then turn its match markers
    into bold (on a tty)."""
    on, off = ("\x1b[1m", "\x1b[0m") if bold else ("", "")
    pieces = []
    for i, part in enumerate(snippet.split("\x02")):
        inner = part.split("\x03", 1)
        if i and len(inner) == 2:
            pieces.append(on + _one_line(inner[0]) + off + _one_line(inner[1]))
        else:
            pieces.append(_one_line(part.replace("\x03", "")))
    return "".join(pieces)


def _one_line(text: str) -> str:
    return strip_control(text).replace("\n", " ")


async def _change(store, args: argparse.Namespace) -> int:
    """Rename, archive, unarchive or delete one session."""
    summary = await store.get_summary(args.id)
    if summary is None:
        raise UsageError(f"no session with id {args.id!r}")
    info = summary.info
    title = strip_control(info.title or "(untitled)")
    if args.action == "rename":
        new_title = " ".join(args.title.split())
        if not new_title:
            raise UsageError("a title cannot be empty")
        await store.set_title(info.id, new_title, by_user=True)
        print(f"Renamed session {info.id} to: {strip_control(new_title)}")
    elif args.action in ("archive", "unarchive"):
        await store.set_archived(info.id, args.action == "archive")
        print(f"{args.action.capitalize()}d session {info.id}: {title}")
    else:
        if not args.yes and not _confirm(
            f"Delete session {info.id} ({title}, {summary.message_count} messages)?"
        ):
            print("Nothing was deleted.", file=sys.stderr)
            return 1
        await store.delete_session(info.id)
        print(f"Deleted session {info.id}: {title}")
    return 0


def _confirm(question: str) -> bool:
    """Ask on a terminal; without one, refuse (the caller says --yes)."""
    if not sys.stdin.isatty():
        raise UsageError("refusing to delete without a terminal to ask on; pass --yes")
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


async def _compact(store, args: argparse.Namespace, launch: Launch) -> int:
    """Summarize the session's current path now; the next turn sends the summary.
    A consumer of the conversation's events, as the chat and print mode are."""
    from core.chat.events import Event, Waiting
    from core.compaction.run import CompactionError
    from core.sessions.session import Session, SessionError

    try:
        session = await Session.open(store, args.id)
    except SessionError as error:
        raise UsageError(str(error)) from None
    conversation = launch.conversation(session, model=getattr(args, "model", None))

    def on_event(event: Event) -> None:
        if isinstance(event, Waiting):
            message = strip_control(event.error.message)
            print(f"tangents: {message}; retrying in {event.seconds:.0f} s", file=sys.stderr)

    conversation.subscribe(on_event)
    try:
        entry = await conversation.compact(args.focus)
    except CompactionError as error:
        return fail(str(error), 1)
    payload = entry.payload
    assert isinstance(payload, Compaction)  # what compact() writes
    print(
        f"Compacted {payload.tokens_before:,} tokens of session {session.id} into a summary "
        f"({len(payload.summary):,} characters, by {payload.details.get('model')}); "
        f"kept from entry {payload.first_kept_id}."
    )
    return 0
