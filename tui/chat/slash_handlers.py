"""What each slash command does in the chat: its handler.

Every entry of :data:`tui.chat.slash.COMMANDS` carries one of these: a function of
the chat (through the small :class:`Chat` interface), the command's argument
and the whole draft, returning False when the command could not be done (the
draft goes back to the input).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from core.sessions.entries import DEFAULT_NOTE_DEPTH, Note
from core.sessions.note import active_note, depth_words
from core.sessions.persistence import SESSION_STATES
from core.sessions.session import SessionError, SessionInactive
from core.sessions.sniff import kind_of

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel

    from core.chat.conversation import Conversation
    from core.sessions.attachments import Attachment
    from core.sessions.session import Session


class Branches(Protocol):
    """What the commands use of the chat's branch actions."""

    def action_open_tree(self) -> None: ...
    def fork(
        self, entry_id: str, first_k: int | None = ..., last_n: int | None = ...
    ) -> object: ...


class Comparing(Protocol):
    """What the commands use of the chat's /compare actions."""

    async def command(self, arg: str) -> bool: ...


class Attaching(Protocol):
    """What the commands use of the chat's composer."""

    def attach(
        self,
        path: Path,
        *,
        restore: str | None = ...,
        refuse: Callable[[Attachment], str | None] | None = ...,
    ) -> object: ...
    def detach(self) -> None: ...


class Chat(Protocol):
    """What the commands use of the chat screen (the protocols above keep this
    module below the chat screen's collaborators, which use it)."""

    conversation: Conversation

    @property
    def branches(self) -> Branches: ...
    @property
    def compare(self) -> Comparing: ...
    @property
    def app(self) -> App: ...
    @property
    def session(self) -> Session: ...
    @property
    def composer(self) -> Attaching: ...
    def notify(self, message: str, *, severity: SeverityLevel = ...) -> None: ...
    def refresh_title(self) -> None: ...
    def set_model(self, model: str | None) -> None: ...
    def action_pick_model(self) -> None: ...
    def action_sessions(self, query: str = "") -> None: ...
    def action_new_session(self) -> None: ...
    def start_compact(self, focus: str | None) -> bool: ...
    def start_round(self, rounds: int) -> bool: ...
    def refresh_read_only(self) -> None: ...
    def read_only_reason(self) -> str: ...
    def sync_now(self) -> None: ...


Handler = Callable[[Chat, str, str], Awaitable[bool]]

MAX_ROUNDS = 20
"""The most rounds one ``/round`` runs (each round asks every agent once)."""

_DEPTH = re.compile(r"\s+depth\s+(\d+)\s*$", re.IGNORECASE)


async def model(chat: Chat, arg: str, text: str) -> bool:
    if arg:
        chat.set_model(arg)
        chat.notify(f"The next message goes to {arg}")
    else:
        chat.action_pick_model()
    return True


async def system(chat: Chat, arg: str, text: str) -> bool:
    if arg:
        chat.conversation.pending_system = arg
        chat.notify("System prompt set: it applies from the next message.")
    else:
        chat.notify(f"System prompt: {chat.conversation.system or '(none)'}")
    return True


async def attach(chat: Chat, arg: str, text: str) -> bool:
    """Attach a file the model can take (/attach, or its old name /image)."""
    if not arg:
        chat.notify(f"Usage: {text.split()[0]} PATH", severity="warning")
        return False
    chat.composer.attach(Path(arg).expanduser(), restore=text, refuse=lambda a: _refusal(chat, a))
    return True


def _refusal(chat: Chat, attachment: Attachment) -> str | None:
    from core.providers.capabilities import refusal

    conversation = chat.conversation
    return refusal(conversation.model, [kind_of(attachment.blob.media_type)], conversation.settings)


async def detach(chat: Chat, arg: str, text: str) -> bool:
    chat.composer.detach()
    return True


async def title(chat: Chat, arg: str, text: str) -> bool:
    if not arg:
        chat.notify(f"Title: {chat.session.title or '(untitled)'}")
        return True
    try:
        await chat.session.set_title(arg)
    except SessionError as error:
        chat.notify(str(error), severity="warning")
        return False
    chat.refresh_title()
    chat.notify(f"Renamed to: {chat.session.title}")
    return True


def note_arg(pinned: Note) -> str:
    """What ``/note`` takes to pin ``pinned`` again (``TEXT depth N``): editing
    it from its row starts from this; a removed note starts empty."""
    return f"{pinned.text} depth {pinned.depth}" if pinned.active else ""


async def note(chat: Chat, arg: str, text: str) -> bool:
    """``/note TEXT [depth N]`` pins a note; ``/note off`` removes it; ``/note`` shows it."""
    if not arg:
        pinned = active_note(chat.session.path)
        chat.notify(
            f"Note ({depth_words(pinned.depth)} from the end): {pinned.text}"
            if pinned
            else f"No note. Usage: /note TEXT [depth N] (default {DEFAULT_NOTE_DEPTH}), /note off"
        )
        return True
    depth = DEFAULT_NOTE_DEPTH
    found = _DEPTH.search(arg)
    if found:
        depth, arg = int(found.group(1)), arg[: found.start()]
    try:
        await chat.session.pin_note(None if arg.strip().lower() == "off" else arg, depth)
    except SessionInactive:
        chat.notify(chat.read_only_reason(), severity="warning")
        return False
    except SessionError as error:
        chat.notify(str(error), severity="warning")
        return False
    chat.notify(
        "Note removed."
        if arg.strip().lower() == "off"
        else f"Note pinned {depth_words(depth)} from the end."
    )
    return True


async def status(chat: Chat, arg: str, text: str) -> bool:
    """``/status`` shows the session's status; ``/status STATE`` sets it."""
    if not arg:
        chat.notify(f"Status: {chat.session.info.status} (one of {', '.join(SESSION_STATES)})")
        return True
    try:
        await chat.session.set_status(arg.strip().lower())
    except SessionError as error:
        chat.notify(str(error), severity="warning")
        return False
    chat.refresh_read_only()
    state = chat.session.info.status
    chat.notify(
        "This session is active: it takes messages."
        if state == "active"
        else f"This session is {state}: read-only until /status active (or /fork it)."
    )
    return True


async def agents(chat: Chat, arg: str, text: str) -> bool:
    """``/agents``: the round table's agents, each with its model and colour,
    and its own note (``[[agents]]`` ``note``) under it."""
    from tui.agent_colors import agent_colors

    configured = chat.conversation.settings.agents
    if not configured:
        chat.notify("No agents: add [[agents]] (name, model) to the config to use @names.")
        return True
    colors = agent_colors(configured)
    lines: list[str] = []
    for a in configured:
        lines.append(f"@{a.name}  {a.model}  {colors[a.name.casefold()].hex}")
        if a.note and a.note.strip():
            lines.append(f"  its note, {depth_words(a.note_depth)} from the end: {a.note.strip()}")
    chat.notify("\n".join(["Agents (@Name asks one, @all every one):", *lines]))
    return True


async def round(chat: Chat, arg: str, text: str) -> bool:
    """``/round N``: the agents of the last question answer each other N times."""
    if not arg.strip().isdigit() or not 1 <= int(arg) <= MAX_ROUNDS:
        chat.notify(f"Usage: /round N (1 to {MAX_ROUNDS})", severity="warning")
        return False
    return chat.start_round(int(arg))


async def compact(chat: Chat, arg: str, text: str) -> bool:
    return chat.start_compact(arg or None)


async def sessions(chat: Chat, arg: str, text: str) -> bool:
    chat.action_sessions(arg)
    return True


async def new(chat: Chat, arg: str, text: str) -> bool:
    chat.action_new_session()
    return True


async def export(chat: Chat, arg: str, text: str) -> bool:
    """``/export FORMAT [PATH]``; without a path, a new file in the working directory."""
    from core.formats.export import EXPORT_FORMATS, default_file_name, export_text, free_path

    format, _, target = arg.partition(" ")
    if format not in EXPORT_FORMATS:
        chat.notify(f"Usage: /export {'|'.join(EXPORT_FORMATS)} [PATH]", severity="warning")
        return False
    store = chat.session.store
    info = await store.get_session(chat.session.id)
    if info is None:
        chat.notify("Nothing to export yet: send a message first.", severity="warning")
        return True
    path = (
        Path(target.strip()).expanduser()
        if target.strip()
        else free_path(Path.cwd(), default_file_name(info, format))
    )
    try:
        exported = await export_text(store, info, format)
        await asyncio.to_thread(path.write_text, exported, encoding="utf-8")
    except OSError as error:
        chat.notify(f"Could not export to {path}: {error.strerror or error}", severity="error")
        return False
    chat.notify(f"Exported this session ({format}) to {path.absolute()}")
    return True


async def info(chat: Chat, arg: str, text: str) -> bool:
    """``/info``: the session's overview in a dialog."""
    from core.formats.overview import load_overview
    from tui.screens.info import InfoScreen

    store = chat.session.store
    session_info = await store.get_session(chat.session.id)
    if session_info is None:
        chat.notify("Nothing here yet: send a message first.", severity="warning")
        return True
    chat.app.push_screen(InfoScreen(await load_overview(store, session_info)))
    return True


async def tree(chat: Chat, arg: str, text: str) -> bool:
    chat.branches.action_open_tree()
    return True


async def compare(chat: Chat, arg: str, text: str) -> bool:
    return await chat.compare.command(arg)


async def fork(chat: Chat, arg: str, text: str) -> bool:
    """``/fork`` the whole path; ``/fork K N`` only its first K and last N messages."""
    parts = arg.split()
    if len(parts) not in (0, 2) or not all(p.isdigit() for p in parts):
        chat.notify("Usage: /fork [FIRST_K LAST_N]", severity="warning")
        return False
    leaf = chat.session.leaf_id
    if leaf is None:
        chat.notify("Nothing to fork yet.", severity="warning")
        return False
    first_k, last_n = (int(parts[0]), int(parts[1])) if parts else (None, None)
    chat.branches.fork(leaf, first_k, last_n)
    return True


async def sync(chat: Chat, arg: str, text: str) -> bool:
    """``/sync``: sessions exchanged with the config's ``[sync] folder`` now."""
    chat.sync_now()
    return True


async def help(chat: Chat, arg: str, text: str) -> bool:
    chat.app.action_help()  # type: ignore[attr-defined]
    return True


async def quit(chat: Chat, arg: str, text: str) -> bool:
    chat.app.exit()
    return True
