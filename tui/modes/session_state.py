"""``tangents sessions note|status``: what a session carries into its next
requests, and whether it takes any."""

from __future__ import annotations

import argparse

from core.sanitize import strip_control
from core.sessions.note import depth_words
from core.sessions.session import Session, SessionError
from tui.modes.bootstrap import UsageError


async def pin_note(store, args: argparse.Namespace) -> int:
    """Save a note entry (or, with ``--off``, a note that is off) on the
    session's current branch."""
    if args.off == (args.text is not None):
        raise UsageError("give the note's TEXT, or --off to remove the note")
    try:
        session = await Session.open(store, args.id)
        entry = await session.pin_note(None if args.off else args.text, args.depth)
    except SessionError as error:
        raise UsageError(str(error)) from None
    if args.off:
        print(f"Removed the note of session {session.id} (entry {entry.id}).")
    else:
        print(
            f"Pinned the note {depth_words(args.depth)} from the end of every later request "
            f"of session {session.id} (entry {entry.id}): {strip_control(args.text.strip())}"
        )
    return 0


async def set_status(store, args: argparse.Namespace) -> int:
    try:
        session = await Session.open(store, args.id)
        before = session.info.status
        await session.set_status(args.state)
    except SessionError as error:
        raise UsageError(str(error)) from None
    title = strip_control(session.title or "(untitled)")
    print(f"Session {session.id} is {args.state} (was {before}): {title}")
    return 0
