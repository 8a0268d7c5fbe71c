"""The command palette's list of every action in the keymap registry."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode

from tui import keymap


class ActionCommands(Provider):
    """Every palette-worthy action of the chat screen, with its current keys."""

    def _commands(self) -> list[tuple[keymap.Action, DOMNode]]:
        from tui.widgets.prompt_input import PromptInput

        namespaces: dict[str, DOMNode] = {"app": self.app, "chat": self.screen}
        prompts = self.screen.query(PromptInput)
        if prompts:
            namespaces["input"] = prompts.first()
        return [
            (a, namespaces[a.scope]) for a in keymap.ACTIONS if a.palette and a.scope in namespaces
        ]

    def _help(self, action: keymap.Action) -> str:
        keys = keymap.keys_for(action.id, keymap.overrides_of(self.app))
        return f"{keymap.display_keys(keys)}  ·  {action.id}"

    async def discover(self) -> Hits:
        for action, namespace in self._commands():
            yield DiscoveryHit(
                action.description,
                partial(self.app.run_action, action.action, namespace),
                help=self._help(action),
            )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for action, namespace in self._commands():
            score = max(matcher.match(action.description), matcher.match(action.id))
            if score > 0:
                yield Hit(
                    score,
                    matcher.highlight(action.description),
                    partial(self.app.run_action, action.action, namespace),
                    text=action.description,
                    help=self._help(action),
                )
