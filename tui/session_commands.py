"""``tangents sessions ...``: list, search and export from the shell."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from core.export import to_json_document, to_markdown
from core.sanitize import strip_control
from tui.bootstrap import UsageError, fail, open_store, resolve_launch


def run_sessions_command(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except UsageError as error:
        return fail(str(error))
    except BrokenPipeError:
        return 0


async def _run(args: argparse.Namespace) -> int:
    launch = resolve_launch(args)
    store = await open_store(launch.db_path)
    try:
        if args.action == "list":
            return await _list(store, args)
        if args.action == "export":
            return await _export(store, args)
        if args.action == "search":
            return await _search(store, args)
        raise UsageError(f"unknown action {args.action!r}")
    finally:
        await store.close()


def _tty_safe(text: str) -> str:
    return strip_control(text) if sys.stdout.isatty() else text


async def _list(store, args: argparse.Namespace) -> int:
    summaries = await store.list_sessions(limit=args.limit, include_archived=args.all)
    if args.json:
        rows = [
            {
                "id": s.info.id,
                "title": s.info.title,
                "created_at": s.info.created_at,
                "updated_at": s.info.updated_at,
                "message_count": s.message_count,
                "branch_count": s.branch_count,
                "model": s.model,
                "archived": s.info.archived,
            }
            for s in summaries
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not summaries:
        print("No sessions yet. Start one with: tangents", file=sys.stderr)
        return 0
    for s in summaries:
        title = strip_control(s.info.title or "(untitled)")
        print(f"{s.info.id}  {s.info.updated_at[:19].replace('T', ' ')}  {s.message_count:>5} msg  {title}")
    return 0


async def _export(store, args: argparse.Namespace) -> int:
    info = await store.get_session(args.id)
    if info is None:
        raise UsageError(f"no session with id {args.id!r}")
    if args.format == "json":
        entries = await store.entries(info.id)
        labels = await store.labels(info.id)
        print(json.dumps(to_json_document(info, entries, labels), indent=2, ensure_ascii=False))
    else:
        path = await store.path(info.leaf_id) if info.leaf_id else []
        sys.stdout.write(_tty_safe(to_markdown(info, path)))
    return 0


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
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print(f"No matches for {args.query!r}.", file=sys.stderr)
        return 1
    bold = sys.stdout.isatty()
    for h in hits:
        snippet = _highlight(h.snippet.replace("\n", " "), bold)
        print(f"{h.session_id}  {strip_control(h.title or '(untitled)')}\n    {snippet}")
    return 0


def _highlight(snippet: str, bold: bool) -> str:
    """Sanitize a search snippet, then turn its match markers into bold (on a tty)."""
    on, off = ("\x1b[1m", "\x1b[0m") if bold else ("", "")
    pieces = []
    for i, part in enumerate(snippet.split("\x02")):
        inner = part.split("\x03", 1)
        if i and len(inner) == 2:
            pieces.append(on + strip_control(inner[0]) + off + strip_control(inner[1]))
        else:
            pieces.append(strip_control(part.replace("\x03", "")))
    return "".join(pieces)
