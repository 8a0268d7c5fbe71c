"""One sync of a database with a folder, on a connection of its own: what
``tangents sync`` runs, and what the app runs in the background."""

from __future__ import annotations

import os
from pathlib import Path

from core.sync import git
from core.sync.engine import SyncReport, sync_folder
from core.sync.seal import SealError
from tui.modes.bootstrap import UsageError, open_store


class SyncFailed(Exception):
    """The folder or its git remote could not be used: one line naming the folder."""


def passphrase_from(key_env: str | None) -> str | None:
    """The passphrase the environment variable ``key_env`` holds (None: no
    variable named); a variable named but empty or unset is refused."""
    if not key_env:
        return None
    passphrase = os.environ.get(key_env)
    if not passphrase:
        raise UsageError(f"{key_env} is not set: it should hold the sync folder's passphrase")
    return passphrase


async def sync_once(
    db_path: Path, folder: Path, device: str, passphrase: str | None = None
) -> SyncReport:
    """Pull (when git carries the folder), sync, push; the database is opened
    for this sync and closed after it; ``passphrase`` opens an encrypted folder."""
    carried = git.has_upstream(folder)
    store = await open_store(db_path)
    try:
        if carried:
            git.pull(folder, device)
        report = await sync_folder(store, folder, device, passphrase=passphrase)
        if carried:
            git.push(folder, device)
    except OSError as error:
        raise SyncFailed(f"cannot sync with {folder}: {error.strerror or error}") from None
    except (git.GitError, SealError) as error:
        raise SyncFailed(f"cannot sync with {folder}: {error}") from None
    finally:
        await store.close()
    return report
