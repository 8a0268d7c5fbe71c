"""``tangents`` without ``-p``: resolve settings, database and session, then run
the app. Start-up errors (bad config, unusable database, unknown session) are
printed as one line before Textual takes the terminal (exit code 2).

Nothing on the way to the first frame imports a provider SDK: they load on the
first request. This module imports only the standard library and core at
first, so the terminal probe below starts before Textual is imported.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from core.sanitize import strip_control
from tui.modes.bootstrap import (
    Launch,
    UsageError,
    fail,
    one_line_errors,
    open_store,
    resolve_launch,
    resolve_session,
)
from tui.modes.terminal_title import title_kept

if TYPE_CHECKING:
    from core.sessions.persistence import SessionStore
    from core.sessions.session import Session


SWITCH_SECONDS = 0.001
"""How long the app's thread may hold the interpreter while another thread
waits for it (Python's default: 5 ms). A key read (the terminal's input
thread) and a frame written (Textual's output thread) each wait for it once
or twice; while a reply streams the app's thread is rarely idle, and a key's
echo waited for those handovers."""


def run_app(args: argparse.Namespace) -> int:
    from tui.internals import gc_policy as _gc
    from tui.internals.textual_private import patches_wanted

    speed = bool(patches_wanted())  # the environment's word; the config's comes next
    _gc.take_charge(speed)
    _gc.pause_for_start_up()  # until the chat view's modules are in
    with title_kept():  # restored at exit, whatever changed it meanwhile
        probe = probe_terminal_graphics()
        try:
            launch = prepare_launch(args)
            if speed and not patches_wanted(launch.settings.textual_patches):
                speed = False
                _gc.end_start_up()
                _gc.take_charge(False)
            with quick_handovers(speed):
                return asyncio.run(_run(args, launch, probe))
        except one_line_errors() as error:
            if probe is not None:
                probe.join()  # its questions' answers are read, not left for the shell
            return fail(str(error))
        except KeyboardInterrupt:
            return 130
        finally:
            _gc.end_start_up()  # when the app never got that far


@contextmanager
def quick_handovers(wanted: bool = True) -> Iterator[None]:
    """Threads waiting for the interpreter get it within :data:`SWITCH_SECONDS`
    (when ``wanted``: the speed patches' switch)."""
    if not wanted:
        yield
        return
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_SECONDS)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def prepare_launch(args: argparse.Namespace) -> Launch:
    """Settings for the app, with the checks only the app needs."""
    from tui import agent_colors, keymap

    if getattr(args, "resume", False) and (args.continue_ or args.session or args.from_entry):
        raise UsageError("-r/--resume opens the session picker: leave out -c, --session and --from")
    return resolve_launch(
        args,
        check=lambda s: keymap.problems(s.keymap) + agent_colors.problems(s.agents),
    )


async def build_app(args: argparse.Namespace, launch: Launch):
    """Open the store and the session and make the app: ``(app, store)``; the
    caller closes the store after the app has run. Used by tests as well."""
    from tui.modes.app import create_app

    store = await open_store(launch.db_path)
    try:
        session = await resolve_session(store, args, cwd=os.getcwd())
    except BaseException:
        await store.close()
        raise
    app = create_app(
        session,
        launch,
        model=getattr(args, "model", None),
        thinking=getattr(args, "thinking", None),
        system=getattr(args, "system", None),
        open_picker=getattr(args, "resume", False),
    )
    return app, store


def probe_terminal_graphics() -> threading.Thread | None:
    """Start asking the terminal which image protocols it speaks and its cell
    size (:mod:`tui.terminal_answers`): before Textual takes the terminal, in
    a thread, so that a slow answer (a remote terminal) overlaps the import of
    the rest of the app; keys typed meanwhile are kept for the app."""
    if (
        not sys.__stdout__
        or not sys.__stdout__.isatty()
        or not sys.__stdin__
        or not sys.__stdin__.isatty()
    ):
        return None
    from tui.terminal_answers import ask_terminal

    thread = threading.Thread(target=ask_terminal, name="terminal-probe", daemon=True)
    thread.start()
    return thread


async def _run(
    args: argparse.Namespace, launch: Launch, probe: threading.Thread | None = None
) -> int:
    app, store = await build_app(args, launch)
    app.load_sdk(at_start=True)  # in a thread, while the first frame is made
    try:
        if probe is not None:
            probe.join()
        try:
            await app.run_async()
        finally:  # whatever ended the app, what was typed and not sent is kept
            for keeper in app.draft_keepers:
                await keeper.flush()
            cut_short = await app.sync_at_quit()
        if cut_short:
            print(cut_short)
        unsent = app.draft_keepers[-1].text.strip() if app.draft_keepers else ""
        again = await resume_command(app.conversation.session, store, args.db)
        if unsent:
            where = "with the session" if again is not None else "for the next new session"
            print(f"Your unsent draft is kept {where}.")
        if again is not None:
            print(f"Resume with: {again}")
        return app.return_code or 0
    finally:
        await store.close()


async def resume_command(session: Session, store: SessionStore, db: str | None) -> str | None:
    """The command that comes back to ``session`` (None when it was never saved):
    ``-c`` for the newest session, else its id; ``--db`` as it was given, made
    safe for the terminal it is printed to (a file name may hold escapes)."""
    if not session.persisted:
        return None
    where = f" --db {strip_control(shlex.quote(db))}" if db else ""
    latest = await store.latest_session()
    if latest is not None and latest.id == session.id:
        return f"tangents{where} -c"
    return f"tangents{where} --session {session.id}"
