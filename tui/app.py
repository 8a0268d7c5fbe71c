"""The Textual app and its factory, shared by the command line and the tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.screen import Screen

from core.session import Session
from tui import keymap
from tui.bootstrap import Launch
from tui.conversation import Conversation
from tui.screens.chat import ChatScreen
from tui.screens.help import HelpScreen

if TYPE_CHECKING:
    from core.tools import ToolRegistry


class TangentsApp(App[None]):
    TITLE = "Tangents"
    BINDINGS = keymap.bindings("app")

    def __init__(self, conversation: Conversation) -> None:
        super().__init__()
        self.conversation = conversation
        self._tools: ToolRegistry | None = None

    @property
    def keymap_overrides(self) -> Mapping[str, str]:
        return self.conversation.settings.keymap

    def get_default_screen(self) -> ChatScreen:
        return ChatScreen(self.conversation, show_thinking=self.conversation.settings.show_thinking)

    def on_mount(self) -> None:
        if self.keymap_overrides:
            self.set_keymap(dict(self.keymap_overrides))

    async def on_unmount(self) -> None:
        if self._tools is not None:
            await self._tools.aclose()

    @property
    def tool_registry(self) -> ToolRegistry:
        """The tools the model may call, one registry for the app's lifetime. Made
        at the first reply; its MCP servers start when tools are first listed."""
        if self._tools is None:
            from core.tools import ToolRegistry

            self._tools = ToolRegistry.default(self.conversation.settings, cwd=Path.cwd())
        return self._tools

    def forget_tool_approvals(self) -> None:
        """Forget the "allow for this session" answers: call when another session is opened."""
        if self._tools is not None:
            self._tools.forget_approvals()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own commands, minus Quit: the keymap's quit is listed already."""
        return (c for c in super().get_system_commands(screen) if c.title != "Quit")

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen(self.keymap_overrides))


def create_app(
    session: Session,
    launch: Launch,
    *,
    model: str | None = None,
    thinking: str | None = None,
    system: str | None = None,
) -> TangentsApp:
    """``model``, ``thinking`` and ``system`` are the command line's explicit
    choices; without them the session's own (or the settings') apply."""
    conversation = Conversation(
        session,
        launch.settings,
        default_model=launch.model,
        default_thinking=launch.thinking,
        api_base=launch.api_base,
        model=model,
        thinking=thinking,
        system=system,
    )
    return TangentsApp(conversation)
