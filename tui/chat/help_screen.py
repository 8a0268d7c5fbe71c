"""The help dialog: every key binding (with the config's overrides applied)
and every slash command, generated from the registries."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from core.sanitize import strip_control
from tui import keymap
from tui.chat import slash

SCOPE_TITLES = {
    "input": "In the message input",
    "chat": "In the chat",
    "app": "Anywhere",
    "dialog": "In dialogs",
    "picker": "In the model picker",
    "sessions": "In the session picker",
    "approval": "When a tool asks for approval",
    "message": "On a focused message",
    "tree": "In the session tree",
    "compare": "In the compare screen",
    "confirm": "In a yes/no question",
}


NEWLINE_KEYS = (
    "ctrl+j inserts a newline in every terminal, tmux and screen included. shift+enter and "
    "alt+enter insert one only where the terminal tells them apart from Enter (kitty keyboard "
    "protocol: kitty, WezTerm, foot, Ghostty); inside tmux both arrive as Enter and send."
)


def keys_table(overrides: Mapping[str, str]) -> Group:
    """One table per place (its name as the title): keys, then what they do with
    the id to remap them (dim) after it, so the descriptions keep most of the
    width even at 80 columns."""
    tables = []
    for scope, title in SCOPE_TITLES.items():
        table = Table(
            box=None,
            show_header=False,
            pad_edge=False,
            expand=True,
            title=Text(title, style="bold italic"),
            title_justify="left",
        )
        table.add_column(max_width=20, ratio=1)
        table.add_column(ratio=4)
        for action in keymap.ACTIONS:
            if action.scope == scope:
                keys = strip_control(keymap.display_keys(keymap.keys_for(action.id, overrides)))
                table.add_row(
                    Text(keys, style="bold"),
                    Text.assemble(action.description, (f" · {action.id}", "dim")),
                )
        tables.append(table)
    return Group(*tables)


def commands_table() -> Table:
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False, expand=True)
    table.add_column(Text("Command"), no_wrap=True)
    table.add_column(Text("What it does"))
    for command in slash.COMMANDS:
        usage = f"/{command.name} {command.args}".rstrip()
        table.add_row(Text(usage, style="bold"), Text(command.description))
    table.add_row(Text("//text", style="bold"), Text("Send a message that starts with /"))
    return table


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = keymap.bindings("dialog")

    def __init__(self, overrides: Mapping[str, str]) -> None:
        super().__init__()
        self.overrides = overrides

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys and commands"
            body.border_subtitle = f"{keymap.first_key('close', self.overrides)} to close"
            yield Static(
                Text(
                    f"{NEWLINE_KEYS}\n"
                    "Paste or drop the path of an image, audio file or PDF to attach it.\n"
                    'Change any key in the [keymap] table of config.toml: action id = "keys" '
                    "(the id is after each action, dimmed)."
                ),
                id="help-notes",
            )
            yield Static(keys_table(self.overrides), id="help-keys")
            yield Static(commands_table(), id="help-commands")

    def action_close(self) -> None:
        self.dismiss()
