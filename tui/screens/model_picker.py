"""Choosing a model: type to filter, Enter to pick (or to use the typed name
as it is, for a model the list does not know).

The list comes from litellm's model table, read in a thread worker when the
dialog opens, never at start-up, and from the model lists of the current
model's server (a local one) and of each ``[[endpoints]]`` entry, asked at the
same time and shown first.
"""

from __future__ import annotations

import asyncio

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from core.providers.target import Target
from core.sanitize import strip_control
from core.settings import Settings
from tui import keymap
from tui.models import known_models, model_label, servers_to_ask

SHOWN_LIMIT = 200
"""Options rendered at once; typing narrows the rest."""


class ModelPicker(ModalScreen[str | None]):
    CSS_PATH = "model_picker.tcss"
    BINDINGS = keymap.bindings("dialog") + keymap.bindings("picker")

    def __init__(self, settings: Settings, current: str, target: Target) -> None:
        """``target``: where the current model's requests go (its server is asked)."""
        super().__init__()
        self.settings = settings
        self.current = current
        self.target = target
        self.models: list[str] = [current]
        self.served: list[str] = []
        self.list_loading = True

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-body") as body:
            body.border_title = "Model"
            choose, cancel = (keymap.key_in(self, i) for i in ("picker_choose", "close"))
            body.border_subtitle = f"{choose} to choose · {cancel} to cancel"
            yield Input(
                placeholder="filter, or type any model name (provider/model)", id="picker-filter"
            )
            yield OptionList(id="picker-list")
            yield Static("loading the model list…", id="picker-status")

    def on_mount(self) -> None:
        self._show()
        self._load()
        self._ask_servers()

    @work(thread=True, exit_on_error=False, group="models")
    def _load(self) -> None:
        models = known_models(self.settings, [self.current])
        self.app.call_from_thread(self._loaded, models)

    def _loaded(self, models: list[str]) -> None:
        self.models = list(dict.fromkeys([*self.served, *models]))
        self.list_loading = False
        self._show()

    @work(exit_on_error=False, group="served-models")
    async def _ask_servers(self) -> None:
        from core.providers.served_models import served_models

        servers = servers_to_ask(self.current, self.settings, self.target)
        answers = await asyncio.gather(*(served_models(root) for root in servers))
        self.served = [
            f"{prefix}/{name}"
            for prefix, names in zip(servers.values(), answers, strict=True)
            for name in names
        ]
        if self.served:
            current = [m for m in self.models if m == self.current]
            self.models = list(dict.fromkeys([*current, *self.served, *self.models]))
            self._show()

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self) -> None:
        self._show()

    def _show(self) -> None:
        query = self.query_one("#picker-filter", Input).value.strip().lower()
        matches = [m for m in self.models if query in m.lower()]
        options = self.query_one("#picker-list", OptionList)
        options.clear_options()
        options.add_options(
            Option(Content(strip_control(model_label(m))), id=m) for m in matches[:SHOWN_LIMIT]
        )
        shown = matches[:SHOWN_LIMIT]
        for preferred in (query, self.current):
            if preferred in shown:
                options.highlighted = shown.index(preferred)
                break
        else:
            options.highlighted = 0 if shown else None
        status = f"{len(matches)} of {len(self.models)} models"
        if len(matches) > SHOWN_LIMIT:
            status += f" (first {SHOWN_LIMIT} shown; type to narrow)"
        if self.list_loading:
            status = "loading the model list…"
        self.query_one("#picker-status", Static).update(Content(status))

    @on(OptionList.OptionSelected, "#picker-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_choose(self) -> None:
        """The highlighted model, else the typed name as it is."""
        options = self.query_one("#picker-list", OptionList)
        typed = self.query_one("#picker-filter", Input).value.strip()
        if options.highlighted is not None and options.option_count:
            self.dismiss(options.get_option_at_index(options.highlighted).id)
        elif typed:
            self.dismiss(typed)

    def action_cursor_down(self) -> None:
        self.query_one("#picker-list", OptionList).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one("#picker-list", OptionList).action_cursor_up()

    def action_close(self) -> None:
        self.dismiss(None)
