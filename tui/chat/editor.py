"""Editing the draft in the user's $VISUAL / $EDITOR while the app is suspended."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from textual.app import App, SuspendNotSupported


class EditorError(Exception):
    """The editor could not be run; the message says why."""


def editor_command() -> list[str]:
    command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not command:
        raise EditorError("set $EDITOR (or $VISUAL) to edit the draft in an editor")
    return shlex.split(command)


def edit_text(app: App, text: str) -> str | None:
    """Run the editor on ``text``; the edited text, or None when the editor
    failed (a non-zero exit, as with vim's ``:cq``, keeps the draft as it was)."""
    command = editor_command()
    fd, name = tempfile.mkstemp(prefix="tangents-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            with app.suspend():
                returncode = subprocess.run([*command, name], check=False).returncode
        except SuspendNotSupported:
            raise EditorError("this terminal cannot hand over to an editor") from None
        except OSError as error:
            raise EditorError(f"cannot run {command[0]}: {error.strerror or error}") from None
        if returncode != 0:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)
