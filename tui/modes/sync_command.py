"""``tangents sync``: one exchange of sessions through the shared folder."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from core.sanitize import json_for_terminal, strip_control
from core.settings import read_state, write_state
from core.sync import git
from core.sync.device import device_id
from core.sync.engine import sync_folder
from core.sync.seal import SealError
from tui.modes.bootstrap import UsageError, fail, one_line_errors, open_store, resolve_launch

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
    passphrase = _passphrase(args.key_env or launch.settings.sync.key_env)
    device = device_id()
    carried = git.has_upstream(folder)
    store = await open_store(launch.db_path)
    try:
        if carried:
            git.pull(folder, device)
        report = await sync_folder(store, folder, device, passphrase=passphrase)
        if carried:
            git.push(folder, device)
    except OSError as error:
        return fail(f"cannot sync with {folder}: {error.strerror or error}", code=1)
    except (git.GitError, SealError) as error:
        return fail(f"cannot sync with {folder}: {error}", code=1)
    finally:
        await store.close()
    for line in report.refused:
        print(f"tangents: {strip_control(line)}", file=sys.stderr)
    if args.json:
        print(json_for_terminal({"folder": str(folder), **report.to_dict()}))
    else:
        print(strip_control(f"Synced with {folder} as {device}: {report.summary()}."))
    return 0


def _passphrase(key_env: str | None) -> str | None:
    """The passphrase the environment variable ``key_env`` holds (None: no
    variable named); a variable named but empty or unset is refused."""
    if not key_env:
        return None
    passphrase = os.environ.get(key_env)
    if not passphrase:
        raise UsageError(f"{key_env} is not set: it should hold the sync folder's passphrase")
    return passphrase


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
