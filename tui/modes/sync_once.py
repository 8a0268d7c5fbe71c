"""One sync of a database with a folder, on a connection of its own: what
``tangents sync`` runs, and what the app runs in the background."""

from __future__ import annotations

from pathlib import Path

from core.sync import git
from core.sync.engine import SyncReport, sync_folder
from tui.modes.bootstrap import open_store


class SyncFailed(Exception):
    """The folder or its git remote could not be used: one line naming the folder."""


async def sync_once(db_path: Path, folder: Path, device: str) -> SyncReport:
    """Pull (when git carries the folder), sync, push; the database is opened
    for this sync and closed after it."""
    carried = git.has_upstream(folder)
    store = await open_store(db_path)
    try:
        if carried:
            git.pull(folder, device)
        report = await sync_folder(store, folder, device)
        if carried:
            git.push(folder, device)
    except OSError as error:
        raise SyncFailed(f"cannot sync with {folder}: {error.strerror or error}") from None
    except git.GitError as error:
        raise SyncFailed(f"cannot sync with {folder}: {error}") from None
    finally:
        await store.close()
    return report
