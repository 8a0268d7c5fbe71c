"""``tangents sync``: one exchange of sessions through the shared folder."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from core.sanitize import json_for_terminal, strip_control
from core.settings import read_state, write_state
from core.sync.device import device_id
from tui.modes.bootstrap import UsageError, fail, one_line_errors, resolve_launch
from tui.modes.sync_once import SyncFailed, passphrase_from, sync_once

_WARNED = "sync_db_warned"


def run_sync_command(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except one_line_errors() as error:
        return fail(str(error))


async def _run(args: argparse.Namespace) -> int:
    launch = resolve_launch(args)
    given = args.folder or launch.settings.sync.folder
    if not given:
        raise UsageError("no sync folder: pass --folder DIR or set folder in the config's [sync]")
    folder = Path(given).expanduser()
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a directory (the folder your sync engine shares)")
    folder = folder.resolve()
    _warn_if_inside(launch.db_path, folder)
    passphrase = passphrase_from(args.key_env or launch.settings.sync.key_env)
    device = device_id()
    try:
        report = await sync_once(launch.db_path, folder, device, passphrase)
    except SyncFailed as error:
        return fail(str(error), code=1)
    for line in report.refused:
        print(f"tangents: {strip_control(line)}", file=sys.stderr)
    if args.json:
        print(json_for_terminal({"folder": str(folder), **report.to_dict()}))
    else:
        print(strip_control(f"Synced with {folder} as {device}: {report.summary()}."))
    return 0


def _warn_if_inside(db_path: Path, folder: Path) -> None:
    """A live SQLite database in a synced folder gets corrupted by the engine
    copying it mid-write: say so, once per database."""
    db = db_path.expanduser().resolve()
    if not db.is_relative_to(folder):
        return
    warned = read_state().get(_WARNED)
    known = [p for p in warned if isinstance(p, str)] if isinstance(warned, list) else []
    if str(db) in known:
        return
    print(
        strip_control(
            f"tangents: warning: the database {db} is inside the sync folder; a sync engine "
            "copying it while it is written can corrupt it: keep it elsewhere (--db)"
        ),
        file=sys.stderr,
    )
    write_state(**{_WARNED: [*known, str(db)]})
