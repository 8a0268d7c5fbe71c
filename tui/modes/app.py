"""The Textual app and its factory, shared by the command line and the tests."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events
from textual.app import App, SystemCommand
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.signal import Signal
from textual.widget import Widget

from core.chat.conversation import Conversation
from core.providers import http_clients
from core.sanitize import strip_control
from core.sessions.session import Session
from core.settings import write_state
from tui import keymap
from tui.chat.chat_screen import ChatScreen
from tui.chat.drafts import DraftKeeper
from tui.internals.keys_first import ui_first
from tui.internals.textual_private import (
    give_result_callback,
    key_events,
    paint_now,
    patch_textual,
    patches_wanted,
    warm_link_patterns,
)
from tui.modes.bootstrap import Launch
from tui.terminal_answers import typed_ahead
from tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from core.sync.auto import SyncOutcome
    from core.tools import ToolRegistry
    from tui.modes.app_sync import AppSync


SYNC_STATUS_EVERY = 20.0
"""Seconds between updates of the footer's "synced N min ago"."""

LINKS_WARM_AFTER = 0.5
"""Seconds after the first frame at which the Markdown parser's link patterns
are compiled in a thread, unless a reply was asked for by then."""


class TangentsApp(App[None]):
    TITLE = "Tangents"
    BINDINGS = keymap.bindings("app")
    CSS_PATH = "../chat/chat.tcss"
    """The chat screen's styles: Textual does not load its default screen's own CSS_PATH."""

    sync_status: reactive[str] = reactive("")
    """What the footer says of the syncs: ``syncing…``, ``synced 3 min ago``, an error."""

    def __init__(
        self,
        conversation: Conversation,
        *,
        make_conversation: Callable[[Session], Conversation],
        open_picker: bool = False,
        db_path: Path | None = None,
    ) -> None:
        """``make_conversation`` gives another session the launch's settings;
        ``open_picker`` (``-r``) starts on the session picker; ``db_path`` is
        the database a sync opens a connection of its own to."""
        super().__init__()
        self.conversation = conversation
        self.make_conversation = make_conversation
        self.open_picker = open_picker
        self.draft_keepers: list[DraftKeeper] = []
        """Every chat screen's draft keeper: written once more after the app ends."""
        self._tools: ToolRegistry | None = None
        self.syncs: AppSync | None = None
        """Syncs with the config's folder; None without one."""
        if conversation.settings.sync.folder and db_path is not None:
            from tui.modes.app_sync import AppSync  # the sync engine: only with a folder

            self.syncs = AppSync(conversation.settings.sync, db_path, self._sync_changed)
        self.sync_ended_signal: Signal[SyncOutcome] = Signal(self, "sync-ended")
        """Published with each sync's outcome as it ends."""
        self._sync_published: SyncOutcome | None = None

    @property
    def keymap_overrides(self) -> Mapping[str, str]:
        return self.conversation.settings.keymap

    def get_default_screen(self) -> ChatScreen:
        patch_textual(patches_wanted(self.conversation.settings.textual_patches))
        screen = self.chat_screen()
        # Textual gives its default screen no result callback, and switch_screen
        # pops one when another session's chat screen replaces it: give it the
        # empty one switch_screen gives every screen it switches to.
        give_result_callback(screen)
        return screen

    def chat_screen(self) -> ChatScreen:
        return ChatScreen(self.conversation, show_thinking=self.conversation.settings.show_thinking)

    def on_mount(self) -> None:
        theme = self.conversation.settings.theme
        if theme and theme in self.available_themes:
            self.theme = theme
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        if self.keymap_overrides:
            self.set_keymap(dict(self.keymap_overrides))
        if self.open_picker and isinstance(self.screen, ChatScreen):
            self.screen.action_sessions()
        self.call_after_refresh(self._type_ahead)

    def on_ready(self) -> None:
        # The first frame is on its way to the terminal: the warm-up starts
        # now, before the keys typed meanwhile (a first message) are handled.
        self.warm_up()
        self.set_timer(LINKS_WARM_AFTER, self._warm_link_patterns)
        if self.syncs is not None:
            self.set_interval(SYNC_STATUS_EVERY, self._sync_changed)
            self.syncs.soon()

    def _sync_changed(self) -> None:
        if self.syncs is None:
            return
        self.sync_status = self.syncs.status()
        last = self.syncs.syncs.last
        if last is not None and last is not self._sync_published:
            self._sync_published = last
            self.sync_ended_signal.publish(last)

    def sync_soon(self) -> None:
        """Something was saved: a sync in the background, when ``[sync] auto`` is on."""
        if self.syncs is not None:
            self.syncs.soon()

    async def sync_now(self) -> tuple[str, SeverityLevel]:
        """One sync now (``/sync``): what to tell the user, in one line."""
        if self.syncs is None:
            return (
                "No sync folder: set folder in the config's [sync] "
                "(or run tangents sync --folder DIR).",
                "warning",
            )
        outcome = await self.syncs.now()
        if outcome.report is None:
            return f"Sync failed: {outcome.error}", "error"
        return f"Synced: {outcome.report.summary()}.", "information"

    async def sync_at_quit(self) -> str | None:
        """The last sync, bounded: a line to print when it was cut short."""
        return None if self.syncs is None else await self.syncs.at_quit()

    def _warm_link_patterns(self) -> None:
        """Compile the Markdown parser's link patterns in a thread, not on this
        one at the first reply that may hold a link (a pause in its
        stream). Not once a reply was asked for: its request and its first
        words would share the interpreter with the thread."""
        if any(isinstance(s, ChatScreen) and s.asked_anything for s in self.screen_stack):
            return
        threading.Thread(target=warm_link_patterns, name="warm-links", daemon=True).start()

    def _type_ahead(self) -> None:
        """Type the keys typed while the terminal was asked about images: before
        the first key read since (in order), or after the first frame."""
        for event in key_events(typed_ahead()):
            ui_first.key_read()
            super().post_message(event)

    def load_sdk(self, *, at_start: bool = False) -> None:
        """Start loading, in the background, the SDK the first request will
        need (a request that comes sooner awaits it without blocking the
        loop); once. ``at_start`` (the launch, before the first frame): only
        httpx, the OpenAI-compatible wire's, light enough to share the
        interpreter with the first frame; the SDKs of the other wires wait
        for the first frame to be painted."""
        from core.providers.registry import warm_up

        target = self.conversation.target
        if at_start and target.wire != "openai":
            return
        warm_up(target.model, target.api_base)

    def warm_up(self) -> None:
        """After the first frame: the SDK (if the launch has not started it) and
        the MCP servers, so that they are ready by the time the first message
        is written."""
        self.load_sdk()
        if self.conversation.settings.mcp_servers:
            self.tool_registry.start_servers()

    def post_message(self, message: Message) -> bool:
        if isinstance(message, (events.Key, events.Paste)) and not message.is_forwarded:
            # (A forwarded key is one read already, bubbling up from its widget.)
            self._type_ahead()
            # Keys first: streams wait until this one is handled (on_event).
            ui_first.key_read()
        return super().post_message(message)

    async def on_event(self, event: events.Event) -> None:
        typed: events.Key | events.Paste | None = None
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            typed = event
        if typed is not None and isinstance(self.screen, ChatScreen):
            # Decided here, before the key or paste goes to the focused widget, so
            # that a burst of keys (fast typing, a paste through tmux) lands in order.
            self.screen.take_typing(typed)
        await super().on_event(event)
        if typed is not None:
            # Queued behind the key at the widget it went to: runs once it is handled.
            target = self.focused or self.screen
            if not target.call_later(self._key_handled, target):
                self._key_handled(target)

    def _key_handled(self, target: Widget) -> None:
        """``target`` has handled a key or paste: streams may go on, and its echo
        is painted at once if it can be (the last key of a burst: a burst is
        painted once), else by the next screen update (which, after Enter,
        shows the message sent too)."""
        ui_first.key_handled()
        with_message = isinstance(target, PromptInput) and target.echo_with_message
        if with_message and isinstance(target, PromptInput):
            target.echo_with_message = False
        painted = not ui_first.key_unhandled and not with_message and paint_now(target)
        if painted or not target.call_after_refresh(ui_first.key_painted):
            ui_first.key_painted()

    def _remember_theme(self, theme) -> None:
        """A theme chosen (in the command palette) is the theme next time too."""
        try:
            write_state(theme=theme.name)
        except OSError as error:
            self.notify(f"Could not remember the theme: {error}", severity="warning")

    def open_session(self, session: Session, came_from: Conversation | None = None) -> None:
        """Show ``session`` on a new chat screen in place of the current one,
        thinking blocks shown or hidden as they are now; a new session goes on
        with the model, thinking level and endpoint of ``came_from``."""
        show_thinking = next(
            (s.show_thinking for s in reversed(self.screen_stack) if isinstance(s, ChatScreen)),
            self.conversation.settings.show_thinking,
        )
        self.conversation = self.make_conversation(session)
        if came_from is not None:
            self.conversation.go_on_from(came_from)
        self.forget_tool_approvals()
        self.switch_screen(ChatScreen(self.conversation, show_thinking=show_thinking))

    async def on_unmount(self) -> None:
        ui_first.forget_keys()  # keys this app read and did not handle or paint never will be
        if self._tools is not None:
            await self._tools.aclose()
        await http_clients.aclose()  # the providers' connections, kept across turns

    @property
    def tool_registry(self) -> ToolRegistry:
        """The tools the model may call, one registry for the app's lifetime. Made
        at launch when MCP servers are configured (they start then), else at the
        first reply."""
        if self._tools is None:
            from core.tools import ToolRegistry

            self._tools = ToolRegistry.default(self.conversation.settings, cwd=Path.cwd())
        return self._tools

    def forget_tool_approvals(self) -> None:
        """Forget the "allow for this session" answers: call when another session is opened."""
        if self._tools is not None:
            self._tools.forget_approvals()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification is plain text, whoever sends it: they quote files,
        models, tool output and provider errors, so never markup, and never
        terminal control sequences."""
        super().notify(
            strip_control(message),
            title=strip_control(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def action_help_quit(self) -> None:
        """ctrl+c with nothing selected to copy: say which key quits (Textual's
        own words are markup, which :meth:`notify` shows as it is)."""
        quit_key = keymap.first_key("quit", self.keymap_overrides)
        self.notify(f"Press {quit_key} to quit (ctrl+c copies selected text).")

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own commands, minus Quit: the keymap's quit is listed already."""
        return (c for c in super().get_system_commands(screen) if c.title != "Quit")

    def action_help(self) -> None:
        from tui.chat.help_screen import HelpScreen

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
    open_picker: bool = False,
) -> TangentsApp:
    """``model``, ``thinking`` and ``system`` are the command line's explicit
    choices; without them the session's own (or the settings') apply. They
    apply to every session opened in the app."""
    make_conversation = partial(
        launch.conversation,
        model=model,
        thinking=thinking,
        system=system,
        pace=ui_first.reader_turn,  # keys first: replies read on once keys are handled
    )
    return TangentsApp(
        make_conversation(session),
        make_conversation=make_conversation,
        open_picker=open_picker,
        db_path=launch.db_path,
    )
