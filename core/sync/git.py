"""A sync folder that is a git work tree with an upstream: git carries it.

Before a sync, commit what this device wrote and pull with rebase (each device
writes only its own files, so a rebase never conflicts); after it, commit
again and push. A remote that refuses becomes one :class:`GitError` line.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from core.sync import folder as layout


class GitError(Exception):
    """A git step failed; the message is one line naming the step."""


def has_upstream(folder: Path) -> bool:
    """Whether ``folder`` is inside a git work tree whose branch has an upstream."""
    try:
        found = _git(folder, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}")
    except (OSError, subprocess.SubprocessError):
        return False
    return found.returncode == 0


def pull(folder: Path, device: str) -> None:
    commit(folder, device)
    _run(folder, "the pull from the remote failed", "pull", "--rebase", "--autostash", "--quiet")


def push(folder: Path, device: str) -> None:
    """Commit and push; if others pushed meanwhile, rebase on them once and retry."""
    commit(folder, device)
    if _git(folder, "push", "--quiet").returncode == 0:
        return
    _run(folder, "the pull from the remote failed", "pull", "--rebase", "--autostash", "--quiet")
    _run(folder, "the remote refused the push", "push", "--quiet")


def commit(folder: Path, device: str) -> None:
    """Commit this device's own files, and the marker of a sealed folder
    (written once, by the device that sealed it), if any changed."""
    mine = layout.device_dir(folder, device)
    if not mine.is_dir():
        return
    top = _top(folder)
    own = [str(p.resolve().relative_to(top)) for p in (mine, layout.marker(folder)) if p.exists()]
    _run(folder, "cannot stage the sync files", "add", "--all", "--", *own)
    if _git(folder, "diff", "--cached", "--quiet", "--", *own).returncode == 0:
        return
    _run(
        folder,
        "cannot commit the sync files",
        "commit",
        "--quiet",
        "-m",
        f"tangents sync from {device}",
        "--",
        *own,
    )


def _top(folder: Path) -> Path:
    found = _git(folder, "rev-parse", "--show-toplevel")
    return Path(found.stdout.strip()).resolve()


def _run(folder: Path, what: str, *args: str) -> None:
    result = _git(folder, *args)
    if result.returncode != 0:
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        raise GitError(f"{what}: {_reason(lines) or f'git {args[0]} exited {result.returncode}'}")


def _reason(lines: list[str]) -> str | None:
    """The most telling line git wrote: a refused ref ("! [remote rejected]
    main -> main (pre-receive hook declined)"), else a fatal error, else any."""
    for start in ("!", "fatal", "error"):
        for line in lines:
            if line.startswith(start):
                return line
    return lines[0] if lines else None


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(folder), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
