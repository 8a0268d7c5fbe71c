"""Every key binding of the app, in one registry.

Each action has an id (the name used in the ``[keymap]`` table of the config),
default keys, a description and the place it lives: ``app`` (anywhere),
``chat`` (the chat screen), ``input`` (the message input), ``dialog`` (the
help and model picker dialogs), ``picker`` (the model picker), ``sessions``
(the session picker), ``tree`` (the session tree), ``compare`` (the compare
screen), ``confirm`` (a yes/no question), ``approval`` (the tool approval
dialog) or ``message`` (a widget of the chat view, which takes its own by id).
The screens, the input and the chat view's widgets build their ``BINDINGS``
from here. The help screen, the command palette and the README table
(``python -m tui.keymap --markdown``) are generated from this, so none of
them can drift.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

from textual.binding import Binding, BindingType
from textual.keys import key_to_character

from core.sanitize import strip_control

if TYPE_CHECKING:
    from textual import events
    from textual.app import App
    from textual.dom import DOMNode
    from textual.widget import Widget

Scope = Literal[
    "app",
    "chat",
    "input",
    "dialog",
    "picker",
    "sessions",
    "tree",
    "compare",
    "confirm",
    "approval",
    "message",
]


@dataclass(frozen=True)
class Action:
    id: str
    keys: str
    """Comma-separated Textual key names."""
    action: str
    """The Textual action run in the scope's namespace."""
    description: str
    scope: Scope
    priority: bool = False
    """Checked before the focused widget sees the key. Never for the input's
    own keys: a priority key runs before the keys typed ahead of it have
    reached the input, so Enter could send half a word."""
    palette: bool = True
    """Offered in the command palette (all but the palette's own key and the dialogs')."""


ACTIONS: tuple[Action, ...] = (
    Action("send", "enter", "submit", "Send the message (or run the /command)", "input"),
    Action(
        "newline",
        "ctrl+j,alt+enter,shift+enter",
        "newline",
        "Insert a newline (ctrl+j in every terminal)",
        "input",
    ),
    Action("complete", "tab", "complete", "Complete the @name, /command or model name", "input"),
    Action("open_editor", "ctrl+e", "open_editor", "Edit the draft in $EDITOR", "input"),
    Action("stop", "escape", "stop", "Stop the reply (or go back to the input)", "chat"),
    Action("retry", "ctrl+r", "retry", "Retry the last reply (or regenerate it)", "chat"),
    Action(
        "focus_messages",
        "ctrl+up",
        "focus_messages",
        "Move to the messages (then up/down between them)",
        "chat",
        priority=True,  # at once: the keys after it (up, up) are meant for the messages
    ),
    Action("toggle_thinking", "ctrl+t", "toggle_thinking", "Show or hide thinking blocks", "chat"),
    Action(
        "cycle_thinking",
        "shift+tab",
        "cycle_thinking",
        "Cycle the thinking level: off, low, medium, high",
        "chat",
    ),
    Action("pick_model", "ctrl+l", "pick_model", "Choose the model", "chat"),
    Action("scroll_up", "pageup", "scroll_up", "Scroll the conversation up", "chat", priority=True),
    Action(
        "scroll_down",
        "pagedown",
        "scroll_down",
        "Scroll the conversation down",
        "chat",
        priority=True,
    ),
    Action("help", "f1", "help", "Show keys and commands", "app", priority=True),
    Action(
        "command_palette",
        "ctrl+p",
        "command_palette",
        "Open the command palette",
        "app",
        priority=True,
        palette=False,
    ),
    Action("quit", "ctrl+q", "quit", "Quit", "app", priority=True),
    Action("close", "escape", "close", "Close the dialog", "dialog", palette=False),
    Action(
        "picker_choose",
        "enter",
        "choose",
        "Choose the highlighted model (or the typed name)",
        "picker",
        priority=True,  # before the filter's own Enter, so a remapped key is the only one
        palette=False,
    ),
    Action("picker_down", "down", "cursor_down", "Next model in the list", "picker", palette=False),
    Action("picker_up", "up", "cursor_up", "Previous model in the list", "picker", palette=False),
    # Branching: the chat's keys act on the focused message (tui/chat/branching.py).
    # Letters always type (into the input, from wherever focus is): a message's
    # own actions are on keys no sentence starts with. Not alt+b or alt+f:
    # terminals send those as word-left and word-right.
    Action(
        "edit_message",
        "enter,alt+e",
        "edit_message",
        "Edit the focused message (sends an alternative) or note",
        "chat",
    ),
    Action(
        "toggle_message_thinking",
        "enter",
        "toggle_message_thinking",
        "Expand or collapse the focused reply's thinking",
        "chat",
    ),
    Action("retry_message", "alt+r", "retry_message", "Regenerate the focused reply", "chat"),
    Action(
        "regenerate_with_model",
        "alt+shift+r",
        "regenerate_with_model",
        "Regenerate the focused reply with another model",
        "chat",
    ),
    Action(
        "branch_here",
        "alt+h",
        "branch_here",
        "Branch here: continue from the focused message (esc undoes it)",
        "chat",
    ),
    Action(
        "previous_alternative",
        "left",
        "previous_alternative",
        "Previous alternative of the focused message",
        "chat",
    ),
    Action(
        "next_alternative",
        "right",
        "next_alternative",
        "Next alternative of the focused message",
        "chat",
    ),
    Action("label_message", "alt+l", "label_message", "Label the focused message", "chat"),
    Action("copy_message", "alt+c", "copy_message", "Copy the focused message's text", "chat"),
    Action(
        "copy_code",
        "alt+shift+c",
        "copy_code",
        "Copy the focused message's last code block",
        "chat",
    ),
    Action(
        "fork_session",
        "alt+n",
        "fork_session",
        "Fork the path up to here into a new session",
        "chat",
    ),
    Action("open_tree", "ctrl+g", "open_tree", "Show the session tree (jump anywhere)", "chat"),
    Action("tree_close", "escape", "close", "Close the tree", "tree", palette=False),
    Action("tree_choose", "enter", "choose", "Go to the selected entry", "tree", palette=False),
    Action(
        "tree_filter",
        "tab,ctrl+f",
        "cycle_filter",
        "Cycle the filter: all, user messages, labelled",
        "tree",
        priority=True,
        palette=False,
    ),
    Action("tree_up", "up", "cursor(-1)", "Previous entry", "tree", palette=False),
    Action("tree_down", "down", "cursor(1)", "Next entry", "tree", palette=False),
    Action("tree_page_up", "pageup", "page(-1)", "Page up", "tree", priority=True, palette=False),
    Action(
        "tree_page_down", "pagedown", "page(1)", "Page down", "tree", priority=True, palette=False
    ),
    Action("tree_first", "ctrl+home", "edge(0)", "First entry", "tree", palette=False),
    Action("tree_last", "ctrl+end", "edge(1)", "Last entry", "tree", palette=False),
    Action(
        "tree_to_leaf", "ctrl+g", "to_leaf", "Back to the current position", "tree", palette=False
    ),
    # Compare: alternatives side by side (tui/screens/compare.py, tui/chat/compare_actions.py).
    Action(
        "compare_alternatives",
        "alt+v",
        "compare_alternatives",
        "Compare the focused message's alternatives",
        "chat",
    ),
    Action(
        "compare_regenerate",
        "alt+shift+v",
        "compare_regenerate",
        "Regenerate with the compare models at once",
        "chat",
    ),
    Action(
        "tree_mark",
        "ctrl+k",
        "mark",
        "Mark to compare (the second mark compares)",
        "tree",
        priority=True,
        palette=False,
    ),
    Action("compare_keep", "enter", "keep", "Keep this alternative (go there)", "compare"),
    Action("compare_diff", "d", "toggle_diff", "Highlight where the texts differ", "compare"),
    Action("compare_label", "l", "label", "Label this alternative", "compare"),
    Action("compare_next", "tab", "column(1)", "Next column", "compare", palette=False),
    Action(
        "compare_previous", "shift+tab", "column(-1)", "Previous column", "compare", palette=False
    ),
    Action(
        "compare_close", "escape", "close", "Stop the replies, or close", "compare", palette=False
    ),
    # Sessions: open the picker or a new session from the chat; the picker's own keys; yes/no questions.
    Action(
        "sessions", "ctrl+o", "sessions", "Open the session picker (resume, search, manage)", "chat"
    ),
    Action("new_session", "ctrl+n", "new_session", "Start a new session", "chat"),
    Action(
        "sessions_resume",
        "enter",
        "resume",
        "Resume the highlighted session",
        "sessions",
        palette=False,
    ),
    Action(
        "sessions_rename",
        "ctrl+r",
        "rename",
        "Rename the highlighted session",
        "sessions",
        palette=False,
    ),
    Action(
        "sessions_archive",
        "ctrl+s",
        "archive",
        "Archive or unarchive the highlighted session",
        "sessions",
        palette=False,
    ),
    Action(
        "sessions_delete",
        "ctrl+d",
        "delete",
        "Delete the highlighted session (asks first)",
        "sessions",
        priority=True,
        palette=False,
    ),
    Action(
        "sessions_show_archived",
        "ctrl+t",
        "toggle_archived",
        "Show or hide archived sessions",
        "sessions",
        palette=False,
    ),
    Action("sessions_down", "down", "cursor(1)", "Next session", "sessions", palette=False),
    Action("sessions_up", "up", "cursor(-1)", "Previous session", "sessions", palette=False),
    Action(
        "sessions_page_down",
        "pagedown",
        "page(1)",
        "Page down the sessions",
        "sessions",
        palette=False,
    ),
    Action(
        "sessions_page_up", "pageup", "page(-1)", "Page up the sessions", "sessions", palette=False
    ),
    Action("confirm_yes", "y", "answer(True)", "Yes", "confirm", palette=False),
    Action("confirm_no", "n,escape", "answer(False)", "No", "confirm", palette=False),
    Action("approve_once", "y", "allow_once", "Allow this tool call", "approval", palette=False),
    Action(
        "approve_session",
        "a",
        "allow_session",
        "Allow this tool for the rest of the session",
        "approval",
        palette=False,
    ),
    Action(
        "approve_deny",
        "n",
        "deny",
        "Deny, with an optional message to the model",
        "approval",
        palette=False,
    ),
    Action(
        "approve_send_denial",
        "enter",
        "send_denial",
        "Deny, with the message written",
        "approval",
        priority=True,  # before the message's own Enter, so a remapped key is the only one
        palette=False,
    ),
    Action(
        "approve_dismiss",
        "escape",
        "dismiss_denied",
        "Deny the call without a message",
        "approval",
        palette=False,
    ),
    # The chat view's widgets: each takes its own with bindings_of() (tui/widgets/).
    Action("chat_first", "home", "first_message", "First message", "message", palette=False),
    Action("chat_last", "end", "last_message", "Last message", "message", palette=False),
    Action(
        "chat_open_file", "enter", "open", "Open with the system's viewer", "message", palette=False
    ),
    Action(
        "chat_toggle_marker",
        "enter",
        "expand_or_collapse",
        "Expand / collapse",
        "message",
        palette=False,
    ),
    Action(
        "chat_previous_message",
        "up",
        "focus_previous_message",
        "Previous message",
        "message",
        palette=False,
    ),
    Action(
        "chat_next_message", "down", "focus_next_message", "Next message", "message", palette=False
    ),
    Action(
        "chat_toggle_thinking",
        "enter",
        "expand_or_collapse",
        "Expand / collapse",
        "message",
        palette=False,
    ),
    Action(
        "chat_toggle_tool",
        "enter",
        "expand_or_collapse",
        "Expand / collapse",
        "message",
        palette=False,
    ),
)

BY_ID: dict[str, Action] = {a.id: a for a in ACTIONS}


def bindings(scope: Scope) -> list[BindingType]:
    """The ``BINDINGS`` of one scope; ``show=False`` because our footer shows its own hints."""
    return [_binding(a) for a in ACTIONS if a.scope == scope]


def bindings_of(*ids: str) -> list[BindingType]:
    """The ``BINDINGS`` of a chat view widget: its own actions of scope ``message``."""
    return [_binding(BY_ID[i]) for i in ids]


def _binding(a: Action) -> Binding:
    return Binding(a.keys, a.action, a.description, show=False, priority=a.priority, id=a.id)


async def run_own_binding(node: Widget, event: events.Key) -> None:
    """Run ``node``'s own binding of the key, if it has one (as the keymap
    maps it), right where the key is, in ``node``'s queue, rather than as it
    bubbles up to the app: keys come in bursts (fast typing, tmux), and each
    must act before the next is handled."""
    active = node.screen.active_bindings
    for key in event.aliases:
        bound = active.get(key)
        if bound is not None and bound.node is node:
            event.prevent_default()
            if await node.app.run_action(bound.binding.action, node):
                event.stop()
            # Skipped (ctrl+c with nothing selected): what the app binds it to runs.
            return


def unknown_ids(keymap: Mapping[str, str]) -> list[str]:
    """Ids in ``keymap`` that no binding has."""
    return sorted(set(keymap) - set(BY_ID))


_MODIFIERS = frozenset({"ctrl", "alt", "shift", "super", "meta", "hyper"})


@cache
def _named_keys() -> frozenset[str]:
    """The names Textual gives keys that are not one character (``enter``,
    ``pageup``, ``f12``...), without their modifiers."""
    from textual.keys import KEY_ALIASES, KEY_NAME_REPLACEMENTS, Keys

    names = {key.value.rpartition("+")[2] for key in Keys if not key.value.startswith("<")}
    for key, aliases in KEY_ALIASES.items():
        names.update(name.rpartition("+")[2] for name in (key, *aliases))
    return frozenset(names | set(KEY_NAME_REPLACEMENTS.values()))


def is_key(key: str) -> bool:
    """Whether ``key`` (``ctrl+s``, ``f2``, ``?``, ``alt+question_mark``) is one
    a terminal can send as Textual names it: distinct known modifiers, then a
    character, a named key or a character's Unicode name."""
    *modifiers, name = key.split("+")
    if not set(modifiers) <= _MODIFIERS or len(set(modifiers)) != len(modifiers):
        return False
    if len(name) == 1:
        return name.isprintable() and not name.isspace()
    return name in _named_keys() or key_to_character(name) is not None


def problems(overrides: Mapping[str, str]) -> list[str]:
    """Every problem of the config's ``[keymap]``, one line each naming the entry,
    in the file's order: an action no binding has, a key that is not a key
    (``send = "entr"`` would leave nothing sending); then the keys something
    else already uses (:func:`conflicts`)."""
    found: dict[str, str] = {}
    unknown = set(unknown_ids(overrides))
    known = ", ".join(a.id for a in ACTIONS)
    for action_id, keys in overrides.items():
        problem = f"unknown action (known: {known})" if action_id in unknown else _key_problem(keys)
        if problem:
            found[action_id] = problem
    lines = [f"keymap.{action_id}: {problem}" for action_id, problem in found.items()]
    return lines + conflicts({i: keys for i, keys in overrides.items() if i not in found})


def _key_problem(keys: str) -> str | None:
    """What is wrong with an entry's comma-separated keys, or None."""
    for key in (k.strip() for k in keys.split(",")):
        if not key:
            return f"an empty key in {json.dumps(keys)}"
        if not is_key(key):
            return f"{json.dumps(key)} is not a key"
    return None


def keys_for(action_id: str, keymap: Mapping[str, str] | None = None) -> str:
    """The keys an action has with ``keymap`` (the config's overrides) applied."""
    if keymap and keymap.get(action_id):
        return keymap[action_id]
    return BY_ID[action_id].keys


_ARROWS = {"left": "←", "right": "→", "up": "↑", "down": "↓"}


def key_name(key: str) -> str:
    """A key as a person writes it: ``[`` for ``left_square_bracket``, ``alt+?``
    for ``alt+question_mark``; named keys (enter, escape, space) keep their names."""
    *modifiers, name = key.strip().split("+")
    character = key_to_character(name) if len(name) > 1 else None
    if character is not None and character.isprintable() and not character.isspace():
        name = character
    name = _ARROWS.get(name, name)
    return "+".join([*modifiers, name])


def display_keys(keys: str) -> str:
    return ", ".join(key_name(k) for k in keys.split(",") if k.strip())


_HINT_NAMES = {"escape": "esc"}
"""Shorter names hints use for a few keys (the help table keeps the full ones)."""


def hint_name(key: str) -> str:
    """A key as a hint shows it: :func:`key_name`, ``esc`` for escape, and
    nothing a terminal would act on (the keymap comes from the user's config)."""
    name = key_name(key)
    *modifiers, last = name.split("+")
    return strip_control("+".join([*modifiers, _HINT_NAMES.get(last, last)]))


def first_key(action_id: str, keymap: Mapping[str, str] | None = None) -> str:
    """The key to mention in hints: the first of the action's keys, by :func:`hint_name`."""
    return hint_name(keys_for(action_id, keymap).split(",")[0])


def overrides_of(app: App[object]) -> Mapping[str, str]:
    """The config's remaps, from ``app`` (none in an app without them, such
    as a test's)."""
    return getattr(app, "keymap_overrides", {})


def key_in(node: DOMNode, action_id: str) -> str:
    """The key a hint shown by ``node`` names for ``action_id``: :func:`first_key`
    with its app's remaps applied."""
    return first_key(action_id, overrides_of(node.app))


_CHAT_PLACES = ("app", "chat", "input", "message")
"""Scopes whose keys are all live at once on the chat screen."""


def _builtin_keys() -> dict[str, str]:
    """Keys Textual itself binds where the chat's keys live: the app's, the screen's
    (focus moves) and the message input's editing keys, each with what it does."""
    from textual.app import App
    from textual.screen import Screen
    from textual.widgets import TextArea

    found: dict[str, str] = {}
    for where, bindings in (
        ("the app", App.BINDINGS),
        ("the screen", Screen.BINDINGS),
        ("the message input", TextArea.BINDINGS),
    ):
        for binding in bindings:
            if isinstance(binding, Binding):
                for key in binding.key.split(","):
                    found.setdefault(key.strip(), f"{where}'s {binding.action}")
    return found


def conflicts(overrides: Mapping[str, str]) -> list[str]:
    """Keys given in ``[keymap]`` that something else already uses where the action
    lives: another action (with the overrides applied) or a key Textual binds
    (``ctrl+q``; ``ctrl+k`` in the input...). Only keys that differ from an
    action's defaults are checked, so the built-in sharing (Enter, Esc) stands."""
    if not overrides:
        return []  # nothing to check: the widgets (Markdown...) stay unimported until shown
    from textual.keys import _normalize_key_list

    problems: list[str] = []
    actions = {a.id: a for a in ACTIONS}
    builtin = _builtin_keys()
    effective = {
        i: {k.strip() for k in _normalize_key_list(keys_for(i, overrides)).split(",")}
        for i in actions
    }
    for action_id in overrides:
        action = actions.get(action_id)
        if action is None:
            continue
        defaults = {k.strip() for k in _normalize_key_list(action.keys).split(",")}
        live = _CHAT_PLACES if action.scope in _CHAT_PLACES else ("app", action.scope)
        for key in sorted(effective[action_id] - defaults):
            shown = key_name(key)
            other = next(
                (
                    o
                    for o, o_keys in effective.items()
                    if o != action_id and key in o_keys and actions[o].scope in live
                ),
                None,
            )
            if other is not None:
                problems.append(f"keymap.{action_id}: {shown!r} is already {other}'s key")
            elif key in builtin and action.scope in _CHAT_PLACES:
                problems.append(f"keymap.{action_id}: {shown!r} is already {builtin[key]} key")
    return problems


def markdown_table(keymap: Mapping[str, str] | None = None) -> str:
    lines = ["| Action id | Keys | Where | What it does |", "|---|---|---|---|"]
    for a in ACTIONS:
        keys = " ".join(f"`{k}`" for k in display_keys(keys_for(a.id, keymap)).split(", "))
        lines.append(f"| `{a.id}` | {keys} | {a.scope} | {a.description} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv not in ([], ["--markdown"]):
        print("usage: python -m tui.keymap [--markdown]", file=sys.stderr)
        return 2
    sys.stdout.write(markdown_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
