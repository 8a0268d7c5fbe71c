"""Slash commands: their names, parsing and completion (no Textual here).

One table: each command's name, what it takes, what it does and its handler
(:mod:`tui.chat.slash_handlers`, which the chat screen runs); and how a half-typed
one completes. A draft that starts with ``//`` is a message starting with ``/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tui.chat import slash_handlers as handlers


@dataclass(frozen=True)
class SlashCommand:
    name: str
    args: str
    """How the arguments are shown in help, e.g. ``[name]``."""
    description: str
    run: handlers.Handler
    """What it does: ``await run(chat, arg, draft)``, False when it could not be done."""


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand(
        "model",
        "[name]",
        "Switch model for the next message (no name: open the picker)",
        handlers.model,
    ),
    SlashCommand(
        "system",
        "[text]",
        "Set the system prompt for the next message (no text: show it)",
        handlers.system,
    ),
    SlashCommand(
        "attach", "PATH", "Attach an image, audio file or PDF to the next message", handlers.attach
    ),
    SlashCommand(
        "image", "PATH", "Attach a file to the next message (as /attach)", handlers.attach
    ),
    SlashCommand("detach", "", "Remove the files attached to the draft", handlers.detach),
    SlashCommand("title", "TEXT", "Rename this session", handlers.title),
    SlashCommand(
        "note",
        "[TEXT [depth N]|off]",
        "Pin a note N messages from the end of every request (default 4); off removes it",
        handlers.note,
    ),
    SlashCommand(
        "status",
        "[active|paused|completed|cancelled]",
        "Show or set this session's status (only an active session takes messages)",
        handlers.status,
    ),
    SlashCommand(
        "agents",
        "",
        "List the round table's agents (@Name asks one, @all every one)",
        handlers.agents,
    ),
    SlashCommand(
        "round",
        "N",
        "Let the agents of the last question answer each other N times (Esc stops)",
        handlers.round,
    ),
    SlashCommand(
        "compact",
        "[focus]",
        "Summarize older messages to free context (focus: what to keep)",
        handlers.compact,
    ),
    SlashCommand(
        "sessions",
        "[query]",
        "Open the session picker (optionally searching for query)",
        handlers.sessions,
    ),
    SlashCommand("resume", "[query]", "Same as /sessions", handlers.sessions),
    SlashCommand("new", "", "Start a new session", handlers.new),
    SlashCommand(
        "export",
        "FORMAT [PATH]",
        "Save this session as markdown, json, openai, mplp, pi or html (default: a file here)",
        handlers.export,
    ),
    SlashCommand(
        "info", "", "Show an overview of this session: branches, tokens, cost, tools", handlers.info
    ),
    SlashCommand("tree", "", "Show the session tree (jump to any entry)", handlers.tree),
    SlashCommand(
        "compare",
        "[MODEL MODEL…|off]",
        "Send the next message to 2-4 models at once and compare the replies",
        handlers.compare,
    ),
    SlashCommand(
        "fork",
        "[K N]",
        "Fork the path into a new session (only its first K and last N messages)",
        handlers.fork,
    ),
    SlashCommand(
        "sync", "", "Exchange sessions with your other machines now ([sync] folder)", handlers.sync
    ),
    SlashCommand("help", "", "Show keys and commands", handlers.help),
    SlashCommand("quit", "", "Quit", handlers.quit),
)

BY_NAME: dict[str, SlashCommand] = {c.name: c for c in COMMANDS}


@dataclass(frozen=True)
class Invocation:
    name: str
    arg: str


def is_command(text: str) -> bool:
    """A draft is a command when it starts with one ``/`` (``//`` escapes it)."""
    stripped = text.lstrip()
    return stripped.startswith("/") and not stripped.startswith("//")


def unescape(text: str) -> str:
    """``//text`` sends ``/text``."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text


def parse(text: str) -> Invocation:
    """Split ``/name arg...``; the name may be unknown (the caller says so)."""
    body = text.strip()[1:]
    name, _, arg = body.partition(" ")
    if "\n" in name:
        name, _, rest = name.partition("\n")
        arg = rest + (" " + arg if arg else "")
    return Invocation(name.lower(), arg.strip())


def suggest(text: str, models: Iterable[str] = ()) -> str:
    """The rest of the unique-prefix completion of a one-line draft, or ``""``.

    ``/mo`` completes to ``/model ``; ``/model claude-`` completes to a model
    name when ``models`` has exactly one longest continuation, and so does the
    last word of ``/compare gpt-4o claude-``.
    """
    if "\n" in text or not is_command(text):
        return ""
    body = text.lstrip()[1:]
    if " " not in body:
        names = [c.name for c in COMMANDS if c.name.startswith(body.lower())]
        if not names:
            return ""
        rest = _common_prefix(names)[len(body) :]
        return rest + " " if len(names) == 1 and BY_NAME[names[0]].args else rest
    name, _, arg = body.partition(" ")
    if name.lower() == "compare":
        arg = arg.rsplit(" ", 1)[-1]
        if not arg:
            return ""
    elif name.lower() != "model" or " " in arg:
        return ""
    matches = [m for m in models if m.startswith(arg) and m != arg]
    return _common_prefix(matches)[len(arg) :] if matches else ""


def _common_prefix(words: list[str]) -> str:
    first, last = min(words), max(words)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def matching(text: str) -> list[SlashCommand]:
    """Commands whose name starts with what is typed after ``/`` (for the hint line)."""
    if "\n" in text or not is_command(text):
        return []
    body = text.lstrip()[1:]
    name = body.split(" ", 1)[0].lower()
    if " " in body:
        return [c for c in COMMANDS if c.name == name]
    return [c for c in COMMANDS if c.name.startswith(name)]
