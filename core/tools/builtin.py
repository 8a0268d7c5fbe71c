"""The built-in tools: read_file, list_directory, search_text (read-only) and
write_file, run_command (side effects: approval required).

Every path goes through :meth:`Roots.resolve`, so nothing outside the working
directory (and the extra roots the user allowed) is read or written. Outputs
are bounded so one call cannot flood the context.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import stat
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.sessions.content import TextContent
from core.sessions.images import MAX_BYTES as MAX_IMAGE_BYTES
from core.sessions.images import ImageError, image_blob, image_content, looks_like_image, too_large
from core.sessions.persistence import Blob
from core.tools.base import Tool, ToolContext, ToolError, ToolOutput
from core.tools.line_scan import LineScan
from core.tools.paths import Roots
from core.tools.process import close_transport, protect_environ, run_process
from core.tools.worker import run_worker
from core.tools.workspace_fs import (
    IsADirectory,
    NoSuchFile,
    check_regular,
    entry_stat,
    open_regular,
    parent_of,
    read_at_most,
    replace_file,
)

READ_LINES = 2000
"""Lines read_file returns when no end_line is given."""
MAX_OUTPUT_CHARS = 60_000
"""Most characters a read_file, list_directory or search_text result holds."""
LINE_CHARS = 2000
"""Longer lines are cut in read_file output."""
LONG_LINE_BYTES = 1024 * 1024
"""read_file stops at a line longer than this (shown cut): never reads one whole."""
READ_BYTES = 64 * 1024 * 1024
"""Most bytes read_file reads of a file (to reach start_line and count the lines)."""
MATCH_CHARS = 300
"""Longer matching lines are cut in search_text output."""
LIST_ENTRIES = 1000
SEARCH_FILE_BYTES = 5 * 1024 * 1024
"""search_text skips larger files."""
SEARCH_SECONDS = 10.0
"""search_text stops and reports what it found after this long."""
SEARCH_WORKER = str(Path(__file__).with_name("search_worker.py"))
DIFF_WORKER = str(Path(__file__).with_name("diff_worker.py"))
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})
COMMAND_OUTPUT_CAP = 30_000
"""Bytes of run_command output kept (first and last halves)."""
COMMAND_TIMEOUT = 120.0
MAX_COMMAND_TIMEOUT = 3600
DIFF_LINES = 2000
"""Longer write_file previews are cut."""
PREVIEW_BYTES = 1024 * 1024
"""Most bytes of the current file the write_file preview reads, and the
largest text it compares: larger changes show the new content's first lines."""
DIFF_SECONDS = 5.0
"""The write_file preview shows the new content's first lines when its diff takes longer."""
_BINARY_PROBE = 8192


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head


# --- read_file -------------------------------------------------------------------

READ_FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File path, relative to the working directory."},
        "start_line": {
            "type": "integer",
            "minimum": 1,
            "description": "First line to return (1-based). Default 1.",
        },
        "end_line": {
            "type": "integer",
            "minimum": 1,
            "description": f"Last line to return (inclusive). Default: {READ_LINES} lines from start_line.",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


async def read_file(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    path = ctx.roots.resolve(args["path"])
    shown = ctx.roots.display(path)
    start = args.get("start_line", 1)
    end = args.get("end_line")
    if end is not None and end < start:
        raise ToolError(f"end_line ({end}) is before start_line ({start})")
    result = await asyncio.to_thread(_read_sync, ctx.roots, path, shown, (start, end))
    if isinstance(result, str):
        return ToolOutput.text(result)
    if ctx.store is None:
        raise ToolError(f"{shown}: images cannot be returned here (no blob store)")
    await ctx.store.put_blob(result)
    note = TextContent(
        f"{shown}: {result.media_type} {result.width}x{result.height}, {len(result.data)} bytes"
    )
    return ToolOutput((note, image_content(result)))


def _read_sync(roots: Roots, path: Path, shown: str, lines: tuple[int, int | None]) -> str | Blob:
    try:
        with parent_of(roots, path, shown) as (dir_fd, name):
            fd = open_regular(dir_fd, name, shown)
    except IsADirectory:
        raise ToolError(f"{shown} is a directory; use list_directory") from None
    try:
        return _read_open(fd, shown, lines)
    except ImageError as error:
        raise ToolError(str(error)) from None
    except OSError as error:
        raise ToolError(f"{shown}: cannot read it ({error.strerror})") from None
    finally:
        os.close(fd)


def _read_open(fd: int, shown: str, lines: tuple[int, int | None]) -> str | Blob:
    size = os.fstat(fd).st_size
    head = read_at_most(fd, _BINARY_PROBE)
    if looks_like_image(head):
        if size > MAX_IMAGE_BYTES:
            raise too_large(shown, size)
        return image_blob(head + read_at_most(fd, MAX_IMAGE_BYTES + 1 - len(head)), shown)
    if _is_binary(head):
        raise ToolError(f"{shown}: binary file ({size} bytes); not shown")
    os.lseek(fd, 0, os.SEEK_SET)
    return _numbered(LineScan(fd, max_line=LONG_LINE_BYTES, max_bytes=READ_BYTES), shown, lines)


def _numbered(scan: LineScan, shown: str, lines: tuple[int, int | None]) -> str:
    """Lines ``start``..``end`` of the scan, numbered, with a note on what was left out."""
    start, end = lines
    last = end if end is not None else start + READ_LINES - 1
    out: list[str] = []
    size = 0
    total = 0
    cut_at: int | None = None
    for number, raw in enumerate(scan, 1):
        total = number
        if number < start or number > last or cut_at is not None:
            continue
        line = raw.decode("utf-8", errors="replace")
        if scan.stopped == "long_line":
            line = line[:LINE_CHARS] + f" [... line cut: longer than {LONG_LINE_BYTES} bytes]"
        elif len(line) > LINE_CHARS:
            line = line[:LINE_CHARS] + f" [... line cut, {len(line) - LINE_CHARS} more characters]"
        numbered = f"{number:6}\t{line}"
        if size + len(numbered) > MAX_OUTPUT_CHARS and out:
            cut_at = number
            continue
        out.append(numbered)
        size += len(numbered) + 1
    if scan.stopped is not None:
        return _partial(out, shown, (start, total, cut_at), scan.stopped)
    if total == 0:
        return f"{shown}: (empty file)"
    if start > total:
        raise ToolError(f"start_line {start} is past the end of {shown} ({total} lines)")
    shown_end = (cut_at - 1) if cut_at is not None else min(last, total)
    body = "\n".join(out)
    if start == 1 and cut_at is None and last >= total:
        return body
    more = f"; continue with start_line={shown_end + 1}" if shown_end < total else ""
    return f"{body}\n[lines {start}-{shown_end} of {total} in {shown}{more}]"


def _partial(out: list[str], shown: str, span: tuple[int, int, int | None], why: str) -> str:
    """The lines read before the scan stopped (a huge line, or the read limit)."""
    start, total, cut_at = span
    if not out:
        raise ToolError(
            f"start_line {start} is beyond what read_file reads of {shown} "
            f"(at most {READ_BYTES} bytes, no line longer than {LONG_LINE_BYTES} bytes); "
            "use search_text or run_command to look further"
        )
    shown_end = (cut_at - 1) if cut_at is not None else start + len(out) - 1
    if why == "long_line" and shown_end >= total:
        note = (
            f"line {total} is longer than {LONG_LINE_BYTES} bytes: the lines after it are not read"
        )
    elif why == "long_line":
        note = f"continue with start_line={shown_end + 1}"
    else:
        note = (
            f"read_file reads at most {READ_BYTES} bytes of a file, the rest is not read; "
            f"continue with start_line={shown_end + 1}"
        )
    body = "\n".join(out)
    return f"{body}\n[lines {start}-{shown_end} of many in {shown}; {note}]"


# --- list_directory --------------------------------------------------------------

LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "Directory, relative to the working directory. Default '.'.",
        },
    },
    "additionalProperties": False,
}


async def list_directory(args: dict[str, Any], ctx: ToolContext) -> str:
    path = ctx.roots.resolve(args.get("path") or ".")
    shown = ctx.roots.display(path)
    return await asyncio.to_thread(_list_sync, path, shown)


def _list_sync(path: Path, shown: str) -> str:
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except FileNotFoundError:
        raise ToolError(f"{shown}: no such directory") from None
    except NotADirectoryError:
        raise ToolError(f"{shown} is a file; use read_file") from None
    except OSError as error:
        raise ToolError(f"{shown}: cannot list it ({error.strerror})") from None
    lines = [f"{shown}/ ({len(entries)} entries)"]
    for entry in entries[:LIST_ENTRIES]:
        try:
            if entry.is_symlink():
                lines.append(f"{entry.name} -> {os.readlink(entry.path)}")
            elif entry.is_dir():
                lines.append(f"{entry.name}/")
            else:
                lines.append(f"{entry.name}  {entry.stat().st_size} bytes")
        except OSError:
            lines.append(f"{entry.name}  (unreadable)")
    if len(entries) > LIST_ENTRIES:
        lines.append(f"[... {len(entries) - LIST_ENTRIES} more entries not shown]")
    return "\n".join(lines)


# --- search_text -----------------------------------------------------------------

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Python regular expression, matched against each line.",
        },
        "path": {"type": "string", "description": "File or directory to search. Default '.'."},
        "glob": {
            "type": "string",
            "description": "Only files whose name or relative path match, e.g. '*.py'.",
        },
        "ignore_case": {"type": "boolean", "description": "Case-insensitive match. Default false."},
        "max_results": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": "Default 100.",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


async def search_text(args: dict[str, Any], ctx: ToolContext) -> str:
    """Walk the files here (a thread), match them in a separate process
    (core/tools/search_worker.py) that is killed at the deadline or when the
    call is cancelled: a hostile pattern cannot hold the app."""
    pattern = args["pattern"]
    path = ctx.roots.resolve(args.get("path") or ".")
    deadline = time.monotonic() + SEARCH_SECONDS
    stop = threading.Event()
    try:
        files, notes = await asyncio.to_thread(
            _search_files, ctx, path, args.get("glob"), deadline, stop
        )
    finally:
        stop.set()  # a cancelled call ends the walk too
    job = {
        "parent": os.getpid(),
        "pattern": pattern,
        "ignore_case": bool(args.get("ignore_case")),
        "files": files,
        "limit": args.get("max_results", 100),
        "max_chars": MAX_OUTPUT_CHARS,
        "match_chars": MATCH_CHARS,
        "file_bytes": SEARCH_FILE_BYTES,
        "probe": _BINARY_PROBE,
    }
    matches, matched_files, done = await _match_in_worker(job, deadline)
    if done.startswith("error:"):
        raise ToolError(f"invalid regular expression {pattern!r}: {done[6:]}")
    if done == "limit":
        notes.append(
            f"stopped at {len(matches)} matches; narrow the pattern, path or glob for the rest"
        )
    elif done != "all" and not notes:
        notes.append(f"stopped after {SEARCH_SECONDS:g} s; narrow the path or the pattern")
    shown_root = ctx.roots.display(path)
    if not matches:
        return f"no matches for {pattern!r} in {shown_root}" + (f" ({notes[0]})" if notes else "")
    summary = f"[{len(matches)} matches in {matched_files} files]"
    return "\n".join(matches + [summary] + [f"[{n}]" for n in notes])


def _search_files(
    ctx: ToolContext, path: Path, glob: str | None, deadline: float, stop: threading.Event
) -> tuple[list[tuple[str, str]], list[str]]:
    """(real path, shown path) of every file to search, and why the walk stopped early."""
    shown_root = ctx.roots.display(path)
    if not path.exists():
        raise ToolError(f"{shown_root}: no such file or directory")

    def walk() -> Any:
        if path.is_file():
            yield path
            return
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                yield Path(dirpath, name)

    files: list[tuple[str, str]] = []
    for file in walk():
        if stop.is_set():
            break
        if time.monotonic() > deadline:
            return files, [f"stopped after {SEARCH_SECONDS:g} s; narrow the path or the pattern"]
        rel = ctx.roots.display(file)
        if glob and not (fnmatch.fnmatch(file.name, glob) or fnmatch.fnmatch(rel, glob)):
            continue
        real = Path(os.path.realpath(file))
        if real != file and not ctx.roots.contains(real):
            continue  # a link leading outside the roots
        files.append((str(real), rel))
    return files, []


async def _match_in_worker(job: dict[str, Any], deadline: float) -> tuple[list[str], int, str]:
    """Run the search worker until it is done or ``deadline``; (matches, files
    with a match, how it ended: ``all``, ``limit``, ``error:...`` or ``""`` when
    stopped at the deadline)."""
    protect_environ()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-S",
        SEARCH_WORKER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=4 * MAX_OUTPUT_CHARS,
    )
    assert process.stdin is not None and process.stdout is not None
    matches: list[str] = []
    matched_files = 0
    done = ""
    try:
        process.stdin.write(json.dumps(job).encode())
        await process.stdin.drain()
        process.stdin.close()
        while not done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                line = await asyncio.wait_for(process.stdout.readline(), remaining)
            except TimeoutError:
                break
            if not line:
                break
            item = json.loads(line)
            if "match" in item:
                matches.append(item["match"])
                matched_files += bool(item["new_file"])
            elif "error" in item:
                done = "error:" + item["error"]
            else:
                done = item["done"]
    except (OSError, ValueError):
        pass  # the worker died: report what arrived
    finally:
        if process.returncode is None:
            process.kill()
        await asyncio.shield(process.wait())
        close_transport(process)
    return matches, matched_files, done


# --- write_file ------------------------------------------------------------------

WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File path, relative to the working directory."},
        "content": {"type": "string", "description": "The whole new content of the file."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class _OldFile:
    text: str | None
    """The current text; None when the file is larger than :data:`PREVIEW_BYTES`."""
    size: int


def _old_file(roots: Roots, path: Path, shown: str) -> _OldFile | None:
    """What the file holds now (read up to a limit); None when it does not exist."""
    try:
        with parent_of(roots, path, shown) as (dir_fd, name):
            if entry_stat(dir_fd, name) is None:
                return None
            fd = open_regular(dir_fd, name, shown)
    except NoSuchFile:
        return None
    try:
        size = os.fstat(fd).st_size
        data = read_at_most(fd, PREVIEW_BYTES + 1)
    except OSError as error:
        raise ToolError(f"{shown}: cannot read it ({error.strerror})") from None
    finally:
        os.close(fd)
    if _is_binary(data[:_BINARY_PROBE]):
        return _OldFile(f"[binary file, {size} bytes]\n", size)
    if len(data) > PREVIEW_BYTES:
        return _OldFile(None, max(size, len(data)))
    return _OldFile(data.decode("utf-8", errors="replace"), size)


async def write_file_preview(args: dict[str, Any], ctx: ToolContext) -> str:
    """A unified diff of the change, computed from bounded texts by a worker
    process with a deadline (core/tools/diff_worker.py); past the limits, the
    first lines of the new content instead."""
    path = ctx.roots.resolve(args["path"])
    shown = ctx.roots.display(path)
    old = await asyncio.to_thread(_old_file, ctx.roots, path, shown)
    new = args["content"]
    if old is not None and old.text == new:
        return f"write_file {shown}: no changes"
    head = f"write_file {shown} ({'new file' if old is None else 'replace'}, {len(new.encode())} bytes)\n"
    if (old is not None and old.text is None) or len(new) > PREVIEW_BYTES:
        now = f"the file has {old.size} bytes now, " if old is not None else ""
        return head + _new_lines(new, f"too large to compare ({now}at most {PREVIEW_BYTES} are)")
    job = {"old": None if old is None else old.text, "new": new, "shown": shown}
    try:
        diff = await run_worker(DIFF_WORKER, {**job, "lines": DIFF_LINES}, DIFF_SECONDS, site=False)
    except TimeoutError:
        return head + _new_lines(new, f"the comparison took over {DIFF_SECONDS:g} s")
    return head + diff.decode("utf-8", errors="replace")


def _new_lines(new: str, why: str) -> str:
    """The first lines of the new content, for a change too large to compare."""
    lines = new[: MAX_OUTPUT_CHARS * 2].splitlines()[:DIFF_LINES]
    shown = "".join(f"+{line[:LINE_CHARS]}\n" for line in lines)[:MAX_OUTPUT_CHARS]
    return f"[{why}; the first lines of the new content follow]\n{shown}"


async def write_file(args: dict[str, Any], ctx: ToolContext) -> str:
    path = ctx.roots.resolve(args["path"])
    shown = ctx.roots.display(path)
    return await asyncio.to_thread(_write_sync, ctx.roots, path, shown, args["content"])


def _write_sync(roots: Roots, path: Path, shown: str, content: str) -> str:
    data = content.encode("utf-8")
    try:
        with parent_of(roots, path, shown, create=True) as (dir_fd, name):
            info = entry_stat(dir_fd, name)
            if info is not None:
                check_regular(info, shown)
                mode = stat.S_IMODE(info.st_mode)
            else:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            replace_file(dir_fd, name, data, mode)
    except OSError as error:
        raise ToolError(f"{shown}: cannot write it ({error.strerror})") from None
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    return (
        f"{'replaced' if info is not None else 'created'} {shown}: {len(data)} bytes, {lines} lines"
    )


# --- run_command -----------------------------------------------------------------

COMMAND_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "minLength": 1,
            "description": "Shell command, run with /bin/sh -c.",
        },
        "timeout_seconds": {
            "type": "number",
            "exclusiveMinimum": 0,
            "maximum": MAX_COMMAND_TIMEOUT,
            "description": f"Kill the command after this many seconds. Default {COMMAND_TIMEOUT:g}.",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


async def run_command_preview(args: dict[str, Any], ctx: ToolContext) -> str:
    timeout = args.get("timeout_seconds", COMMAND_TIMEOUT)
    return f"$ {args['command']}\n(in {ctx.cwd}, timeout {timeout:g} s)"


def _run_command(cap: int) -> Any:
    async def run_command(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        timeout = float(args.get("timeout_seconds", COMMAND_TIMEOUT))
        try:
            result = await run_process(
                args["command"], cwd=str(ctx.cwd), timeout=timeout, cap=cap, env=ctx.env
            )
        except OSError as error:
            raise ToolError(f"cannot start the shell: {error.strerror or error}") from None
        output = (
            result.output
            if result.output.endswith("\n") or not result.output
            else result.output + "\n"
        )
        if result.timed_out:
            status = (
                f"[timed out after {timeout:g} s; the command and its child processes were killed]"
            )
        else:
            status = f"[exit code {result.exit_code}]"
        return ToolOutput.text(output + status, is_error=result.timed_out or result.exit_code != 0)

    return run_command


# --- the set ---------------------------------------------------------------------


def builtin_tools(*, command_output_cap: int = COMMAND_OUTPUT_CAP) -> list[Tool]:
    return [
        Tool(
            "read_file",
            "Read a text file (numbered lines; use start_line/end_line for long files) or an image "
            "(PNG, JPEG, GIF, WebP). Paths are relative to the working directory and must stay inside it.",
            READ_FILE_SCHEMA,
            read_file,
        ),
        Tool(
            "list_directory",
            "List a directory's entries: directories end with '/', files show their size, links their target.",
            LIST_SCHEMA,
            list_directory,
        ),
        Tool(
            "search_text",
            "Search files for a regular expression, line by line; returns path:line: text. Skips binary "
            f"files, files over {SEARCH_FILE_BYTES // 1048576} MB and {', '.join(sorted(SKIP_DIRS))} directories.",
            SEARCH_SCHEMA,
            search_text,
        ),
        Tool(
            "write_file",
            "Create or replace a text file with the given content (parent directories are created). "
            "The user approves each write after seeing the diff.",
            WRITE_SCHEMA,
            write_file,
            side_effects=True,
            preview=write_file_preview,
        ),
        Tool(
            "run_command",
            "Run a shell command in the working directory (stdin closed, stdout and stderr combined). "
            f"Output beyond {command_output_cap} bytes is cut from the middle. On timeout the command and "
            "every process it started are killed; processes left running when it exits are killed too. "
            "The user approves each command.",
            COMMAND_SCHEMA,
            _run_command(command_output_cap),
            side_effects=True,
            preview=run_command_preview,
        ),
    ]
