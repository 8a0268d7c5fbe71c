"""What every mode does first: read settings, open the database, find the session.

Kept free of Textual so print mode and the session commands start fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.paths import default_config_path, default_db_path
from core.sanitize import strip_control
from core.sessions.session import Session, SessionError, inactive_reason
from core.settings import ConfigError, Pace, Settings, load_settings, no_pace, seconds

if TYPE_CHECKING:
    from core.chat.conversation import Conversation


class UsageError(Exception):
    """Bad input from the command line: printed as one line, exit code 2."""


def one_line_errors() -> tuple[type[Exception], ...]:
    """What every mode reports with :func:`fail` (one line, exit code 2) instead
    of a traceback: bad input, a database file that cannot be used (not
    SQLite, damaged, read-only, newer), whenever it shows, and a session whose
    endpoint the user never named.

    Called in an ``except`` clause, so storage is imported only once an error
    is being handled."""
    from core.chat.target import UntrustedEndpoint
    from storage.errors import StorageError

    return (UsageError, StorageError, UntrustedEndpoint)


@dataclass
class Launch:
    """Everything a mode needs, resolved from the command line."""

    settings: Settings
    db_path: Path
    model: str
    thinking: str
    api_base: str | None
    """``--api-base`` when given (else the session's saved endpoint or the settings' apply)."""

    def conversation(
        self,
        session: Session,
        *,
        model: str | None = None,
        thinking: str | None = None,
        system: str | None = None,
        pace: Pace = no_pace,
    ) -> Conversation:
        """The conversation every mode works with: these defaults, and the command
        line's explicit choices (``model``, ``thinking``, ``system``), which beat
        what the session's path says. ``pace``: the mode's say in sharing the
        event loop with the streams it reads (the app's lets keys go first)."""
        from core.chat.conversation import Conversation

        return Conversation(
            session,
            replace(self.settings, pace=pace),
            default_model=self.model,
            default_thinking=self.thinking,
            api_base=self.api_base,
            model=model,
            thinking=thinking,
            system=system,
        )


def resolve_launch(
    args: argparse.Namespace, check: Callable[[Settings], Iterable[str]] | None = None
) -> Launch:
    """The launch the command line asks for; ``check`` adds the caller's own
    config problems (the app's keymap) to the list the settings give."""
    config = getattr(args, "config", None)
    try:
        settings = load_settings(
            Path(config).expanduser() if config else default_config_path(),
            required=bool(config),
            check=check,
        )
    except ConfigError as error:
        raise UsageError(str(error)) from None
    if getattr(args, "system", None):
        settings = replace(settings, system=args.system)
    if getattr(args, "max_time", None) is not None:
        settings = replace(settings, max_time=_max_time(args.max_time))
    if getattr(args, "extra_roots", None):
        settings = replace(settings, extra_roots=settings.extra_roots + tuple(args.extra_roots))
    db = getattr(args, "db", None)
    db_path = Path(db).expanduser() if db else default_db_path()
    model = getattr(args, "model", None) or settings.default_model()
    thinking = getattr(args, "thinking", None) or settings.thinking
    return Launch(settings, db_path, model, thinking, getattr(args, "api_base", None))


def _max_time(text: str) -> float:
    try:
        return seconds(float(text), "--max-time")
    except ValueError:
        raise UsageError("--max-time must be a number of seconds above 0") from None


async def open_store(db_path: Path):
    """Open the SQLite store; a bad file raises :class:`UsageError` naming it.
    (A problem found later raises ``StorageError``: see :func:`one_line_errors`.)"""
    from storage.errors import StorageError
    from storage.store import SqliteStore

    try:
        return await SqliteStore.open(db_path)
    except StorageError as error:
        raise UsageError(str(error)) from None


async def resolve_session(
    store, args: argparse.Namespace, *, cwd: str | None = None, writable: bool = False
) -> Session:
    """New session, ``-c`` (latest), ``--session ID``, plus ``--from ENTRY_ID``.

    ``writable``: a session that is not active is a :class:`UsageError`, found
    before anything (even the ``--from`` position) is written."""
    if getattr(args, "session", None):
        args.session = await full_id(store, "session", args.session)
    if getattr(args, "from_entry", None):
        args.from_entry = await full_id(store, "entry", args.from_entry)
    try:
        if getattr(args, "session", None):
            session = await Session.open(store, args.session)
        elif getattr(args, "continue_", False):
            session = await Session.latest(store) or await Session.create(store, cwd=cwd)
        elif getattr(args, "from_entry", None):
            entry = await store.get_entry(args.from_entry)
            if entry is None:
                raise UsageError(f"no entry with id {args.from_entry!r}")
            session = await Session.open(store, entry.session_id)
        else:
            session = await Session.create(store, cwd=cwd or os.getcwd())
        if writable and not session.info.active:
            raise UsageError(inactive_reason(session.info))
        if getattr(args, "from_entry", None):
            await session.move_leaf(args.from_entry)
    except SessionError as error:
        raise UsageError(str(error)) from None
    return session


async def full_id(store, kind: str, text: str) -> str:
    """The whole id of a session or entry (``kind``) from any unique prefix of it,
    as git takes commits, or its short id (its end); an unknown or ambiguous
    one is a one-line error."""
    text = text.strip().lower()
    table = "sessions" if kind == "session" else "entries"
    candidates = await store.ids_matching(table, text) if text else []
    if text in candidates or len(candidates) == 1:
        return text if text in candidates else candidates[0]
    if not candidates:
        raise UsageError(f"no {kind} with id {text!r}")
    more = " …" if len(candidates) == 6 else ""
    raise UsageError(f"{kind} id {text!r} is ambiguous: {', '.join(candidates[:5])}{more}")


def fail(message: str, code: int = 2) -> int:
    """Print ``tangents: MESSAGE`` on stderr (made safe for a terminal: it may
    quote a file name or a provider's text), each line of a message that lists
    several problems with its own prefix, and return ``code``."""
    for line in strip_control(message).splitlines() or [""]:
        print(f"tangents: {line}", file=sys.stderr)
    return code
