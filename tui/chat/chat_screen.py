"""The chat screen: the current branch, the input, the footer; sending, replies
in a worker, stopping and retrying them, slash commands and attachments.

State that is not UI (the session and what the next message will use) lives
in :class:`~core.chat.conversation.Conversation`; message rendering is the
:class:`~tui.widgets.chat_view.ChatView`'s, kept in step with what the
conversation saves and where it moves by one
:class:`~tui.chat.view_binding.ViewBinding`. The chat view (Markdown, images) is
imported and filled just after the first frame, so the input is there at
once; whatever needs it waits for :attr:`ChatScreen.loaded`. A message sent
before then is on screen at once all the same, in a stand-in row.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import time
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.signal import Signal
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from core.chat.conversation import Conversation
from core.chat.events import (
    CompactionEnded,
    CompactionStarted,
    Event,
    Notice,
    PositionMoved,
    TurnEnded,
    Waiting,
    WindowLearned,
)
from core.chat.front_end import ToolUse, TurnHooks
from core.sanitize import strip_control
from core.sessions.attachments import Attachment
from core.sessions.entries import Entry
from core.sessions.session import Session, SessionError
from core.settings import write_state
from core.tokens import guessed_context_window, known_context_window
from tui import keymap
from tui.agent_colors import agent_colors
from tui.chat import slash, slash_handlers
from tui.chat.branching import BranchController
from tui.chat.commands import ActionCommands
from tui.chat.compare_actions import CompareActions
from tui.chat.composer import Composer
from tui.chat.context_notes import ContextNotes
from tui.chat.drafts import DraftKeeper
from tui.chat.message_queue import MessageQueue, Queued
from tui.internals import gc_policy as _gc
from tui.internals.textual_private import update_now
from tui.models import DEMO, has_any_key
from tui.screens.welcome import welcome_text
from tui.widgets._text import one_line, plain
from tui.widgets.branch_bar import BranchBar
from tui.widgets.compaction_status import CompactionStatus
from tui.widgets.footer import FooterState, StatusFooter
from tui.widgets.prompt_input import PromptInput

_COMPACTING_WHY = {
    "auto": " (the context is near the model's limit)",
    "overflow": " (the model said the context is too long)",
    "fit": " (older messages would not fit the model's limit)",
}

if TYPE_CHECKING:
    from core.chat.front_end import Answer
    from core.chat.results import AgentResult
    from core.sessions.content import ToolCallContent
    from core.sync.auto import SyncOutcome
    from core.tools.base import Approval, Tool
    from core.tools.registry import ToolRegistry
    from tui.chat.view_binding import ViewBinding
    from tui.screens.sessions import PickerResult
    from tui.widgets.assistant_message import AssistantMessage
    from tui.widgets.chat_view import ChatView


class ChatApp(Protocol):
    """What the chat screen asks of the app it runs in (``TangentsApp``, which
    imports this module: the screen names what it uses, not the class)."""

    draft_keepers: list[DraftKeeper]
    """The input's keepers, flushed when the app exits."""

    @property
    def tool_registry(self) -> ToolRegistry: ...
    def open_session(self, session: Session, came_from: Conversation | None = None) -> None: ...


class Syncing(Protocol):
    """What the chat screen asks of the app's syncs (``TangentsApp``)."""

    sync_status: str
    sync_ended_signal: Signal[SyncOutcome]

    def sync_soon(self) -> None: ...
    async def sync_now(self) -> tuple[str, SeverityLevel]: ...


class ChatScreen(Screen[None]):
    CSS_PATH = "chat.tcss"
    BINDINGS = keymap.bindings("chat")
    COMMANDS: ClassVar = {ActionCommands}
    AUTO_FOCUS = "#prompt"

    def __init__(self, conversation: Conversation, *, show_thinking: bool) -> None:
        super().__init__()
        self.conversation = conversation
        self.show_thinking = show_thinking
        self.windows: dict[str, int | None] = {}
        self.reply_worker: Worker | None = None
        """The worker writing a reply, a compaction or a branch summary (one at a time)."""
        self._binding: ViewBinding | None = None
        """Keeps the chat view in step with the conversation, once it shows the path."""
        self._loaded = asyncio.Event()
        """Set once the chat view shows the session's path."""
        self._compacting = False
        self._title_shown: str | None = None
        """The title line as last shown."""
        self._queue = MessageQueue()
        """Messages typed while compacting or while a reply is written, sent once it is over."""
        self.branches = BranchController(self)
        """Edit, regenerate, alternatives, branch here, labels, copy, fork, the tree."""
        self.compare = CompareActions(self)
        self.context_notes = ContextNotes(conversation)
        """What the rows say about messages the model does not see whole."""
        self._typed_at: float | None = None
        """When text was last typed or pasted (None: another key came since)."""
        self._tools_offered: ToolRegistry | None = None
        """The tools offered to the model since the first reply asked for here."""
        self.drafts = DraftKeeper(lambda: self.session)
        """The input's unsent text, kept in the database (tui/chat/drafts.py)."""

    @property
    def session(self) -> Session:
        return self.conversation.session

    @property
    def chat_app(self) -> ChatApp:
        """The app as the screen uses it (Textual types ``app`` as any App; this
        screen runs only in ``TangentsApp``)."""
        return cast(ChatApp, self.app)

    @property
    def chat_view(self) -> ChatView:
        """The messages; mounted once :attr:`loaded` is set."""
        return self.query_one("#chat")  # type: ignore[return-value]

    @property
    def loaded(self) -> bool:
        return self._loaded.is_set()

    @property
    def composer(self) -> Composer:
        return self.query_one(Composer)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one("#prompt", PromptInput)

    @property
    def replying(self) -> bool:
        return self.reply_worker is not None and not self.reply_worker.is_finished

    @property
    def asked_anything(self) -> bool:
        """Has a reply (or a compaction) been asked for on this screen yet?"""
        return self.reply_worker is not None

    def compose(self) -> ComposeResult:
        yield Static(id="chat-title", markup=False)
        yield Static(id="welcome")
        with Vertical(id="chat-slot"):
            yield Static(id="stand-in", markup=False)  # hidden: see _show_stand_in
        yield CompactionStatus(id="compaction-status")
        yield Composer(
            self.conversation.settings,
            lambda: self.conversation.model,
            on_draft=self.drafts.changed,
        )
        yield StatusFooter(id="footer")

    def on_mount(self) -> None:
        self.chat_app.draft_keepers.append(self.drafts)
        self.conversation.subscribe(self._conversation_event)
        self.watch(self.app, "sync_status", lambda _: self.refresh_footer(), init=False)
        cast(Syncing, self.app).sync_ended_signal.subscribe(self, self._sync_ended)
        self.show_welcome()
        self.refresh_read_only()
        model = self.conversation.model
        known = known_context_window(model, self.conversation.settings.context_windows)
        if known is not None:  # in the first frame: one entry of the table, not all of it
            self.windows[model] = known
        self.refresh_footer()
        self.call_after_refresh(self._load_path)

    def on_unmount(self) -> None:
        if self._binding is not None:
            self._binding.close()
        asyncio.ensure_future(self.drafts.flush())  # another session shown, or quitting

    async def view_settled(self) -> None:
        """Wait until the chat view shows everything the conversation reported so far."""
        if self._binding is not None:
            await self._binding.settled()

    @work(group="load", exit_on_error=False)
    async def _load_path(self) -> None:
        """Make and fill the chat view after the first frame. Its modules (Markdown
        and every message widget, slow to import) are imported in a
        thread: keys typed meanwhile still echo. The session's totals, which a
        first message waits for too, are read meanwhile. The model's window is
        looked up after: the price table it reads holds the GIL for a while,
        which, as the import starts when the first message is sent, held that
        message's frame back."""
        totals = asyncio.ensure_future(self.conversation.load_totals())
        try:
            module = await asyncio.to_thread(importlib.import_module, "tui.widgets.chat_view")
        except BaseException:
            totals.cancel()
            raise
        finally:
            _gc.freeze_loaded()  # collection paused for the start-up comes back, whatever happened
        from tui.chat.view_binding import ViewBinding

        view = module.ChatView(
            blob_loader=self.session.store.get_blob,
            show_thinking=self.show_thinking,
            branch_info=self.branches.branch_info,
            context_note=self.context_notes.note,
            retry_key=keymap.first_key("retry", self.conversation.settings.keymap),
            opener=self.conversation.settings.opener,
            agent_colors=agent_colors(self.conversation.settings.agents),
            id="chat",
        )
        try:
            await self.query_one("#chat-slot").mount(view, before=0)  # above a stand-in
            self._binding = ViewBinding(view, self.conversation, self.stand_in)
            await view.set_entries(self.session.path)
            await totals  # before anything is sent: appends from now on add to it
        finally:
            self._loaded.set()
        await self._restore_draft()
        self._refresh_context_notes()
        self.refresh_footer()
        self._lookup_window(self.conversation.model)

    async def _restore_draft(self) -> None:
        """The text left unsent in this session last time comes back to the input
        (unless something was typed meanwhile)."""
        text = await self.drafts.load()
        if text and not self.prompt.text:
            self.prompt.set_draft(text)
            self.notify("Your unsent draft is back in the input.")

    # --- what is shown around the chat -----------------------------------

    def show_welcome(self) -> None:
        """The welcome text, while the session shows no message."""
        welcome = self.query_one("#welcome", Static)
        empty = not self.stand_in.display and not any(
            e.message is not None for e in self.session.path
        )
        welcome.display = empty
        if empty:
            no_key = (
                self.conversation.model == DEMO
                and not has_any_key()
                and not self.conversation.api_base
            )
            welcome.update(
                welcome_text(self.conversation.model, no_key=no_key, overrides=self.app_keymap)
            )

    @property
    def app_keymap(self) -> dict[str, str]:
        return self.conversation.settings.keymap

    def refresh_title(self) -> None:
        """The session's title and how many branches it has, above the chat."""
        tree = self.branches.tree
        branches = tree.leaf_count() if tree is not None and len(tree) else 0
        first = next(
            (e.message.text for e in self.session.path if e.message and e.message.role == "user"),
            "",
        )
        title = one_line(self.session.title or first or "New session", 200)
        count = f" · {branches} branches" if branches > 1 else ""
        text = f"{title}{count}"
        if text != self._title_shown:  # an update lays the whole screen out again
            self._title_shown = text
            self.query_one("#chat-title", Static).update(text)

    def read_only_reason(self) -> str:
        """Why a message or a round is refused in a session that is not active,
        in the app's words (the line above the input says it too)."""
        return (
            f"This session is {strip_control(self.session.info.status)} and takes no new"
            " messages: /status active reactivates it, /fork copies it."
        )

    def refresh_read_only(self) -> None:
        """The line above the input saying the session is read-only, shown
        while its status is not active."""
        info = self.session.info
        self.composer.set_read_only(None if info.active else info.status)

    def refresh_footer(self) -> None:
        self.refresh_title()
        totals = self.conversation.totals()
        model = self.conversation.model
        help_key, palette_key = (
            keymap.first_key(i, self.app_keymap) for i in ("help", "command_palette")
        )
        self.query_one("#footer", StatusFooter).state = FooterState(
            model=model,
            thinking=self.conversation.thinking,
            context_tokens=totals.context_tokens,
            context_estimated=totals.context_estimated,
            window=(self.windows[model] or guessed_context_window(model))
            if model in self.windows
            else None,
            window_guessed=model in self.windows and self.windows[model] is None,
            tokens=totals.tokens,
            cost=totals.cost,
            tokens_estimated=totals.tokens_estimated,
            session_tokens=totals.session_tokens,
            session_cost=totals.session_cost,
            session_estimated=totals.session_estimated,
            hint=f"{help_key} help · {palette_key} commands",
            sync=cast(Syncing, self.app).sync_status,
            keys=self._message_keys() if self.message_focused() else "",
        )

    def _lookup_window(self, model: str) -> None:
        """The window compaction uses (the ``context_windows`` setting, else
        litellm's table; None: a guess), read in a thread (once): the table's
        file is a few MB. Asked after every reply: no worker once it is known."""
        if model not in self.windows:
            self._read_window(model)

    @work(thread=True, exclusive=True, group="window", exit_on_error=False)
    def _read_window(self, model: str) -> None:
        window = known_context_window(model, self.conversation.settings.context_windows)
        self.app.call_from_thread(self._window_found, model, window)

    def _window_found(self, model: str, window: int | None) -> None:
        self.windows[model] = window
        self.refresh_footer()
        if window is None:
            self._learn_window()

    @work(group="learn-window", exit_on_error=False)
    async def _learn_window(self) -> None:
        """Ask the model's server (a local one) for its window; the answer comes
        back as :class:`WindowLearned`."""
        await self.conversation.learn_window()

    # --- sending -----------------------------------------------------------

    @on(PromptInput.Submitted)
    async def _submitted(self, event: PromptInput.Submitted) -> None:
        """The input has already been emptied: whatever is not sent goes back."""
        text = event.text
        if self.composer.editing_note:
            await self._pin_edited_note(text)
            return
        if slash.is_command(text):
            if not await self.run_command(text):
                self.prompt.restore(text)
            return
        if not self.session.info.active:
            # Read-only: the draft stays, the line says the ways on.
            self.notify(self.read_only_reason(), severity="warning")
            self.prompt.restore(text)
            return
        message = slash.unescape(text)
        if not message.strip() and not self.composer.attachments:
            if (
                not self.branches.cancel_edit()
            ):  # an empty input sent while editing cancels the edit
                self.prompt.restore(text)
            return
        edited = self.composer.editing
        if (
            edited is not None
            and edited.message is not None
            and message.strip("\n") == edited.message.text
            and not self.composer.attachments
            and not edited.message.images
        ):
            self.composer.take_edit()
            self.notify("The message is unchanged: nothing was sent.")
            return
        if self._compacting or self.replying:
            # As in pi and Claude Code: sent once the reply (or compaction) is over.
            attachments = self.composer.take_attachments()
            self._queue.add(
                Queued(message.strip("\n"), text, attachments, self.branches.take_edit())
            )
            self.compaction_status.queued = self._queue.texts
            return
        self._start_send(
            message.strip("\n"), text, self.composer.take_attachments(), self.branches.take_edit()
        )

    async def _pin_edited_note(self, text: str) -> None:
        """The note edited from its row, sent: pinned as ``/note TEXT`` would pin
        it (``off`` removes it); empty cancels the edit. Refused: the text stays."""
        if not text.strip():
            self.branches.cancel_edit()
        elif await slash_handlers.note(self, text.strip(), text):
            self.branches.take_edit()
        else:
            self.prompt.restore(text)

    def _start_send(
        self, message: str, draft: str, attachments: list[Attachment], edited: Entry | None
    ) -> None:
        if not self.loaded:
            self._show_stand_in(message)  # now: the chat view is still being loaded
        self.reply_worker = self._send(message, draft, attachments, edited)

    @work(exclusive=True, group="reply", exit_on_error=False)
    async def _send(
        self, message: str, draft: str, attachments: list[Attachment], edited: Entry | None = None
    ) -> None:
        """Send the user's message through the conversation (as an alternative of
        ``edited``: :meth:`~core.chat.conversation.Conversation.edit`) and stream
        the reply. A worker, so that no handler of this screen ever waits (for
        the path to load, for the database) while its messages queue up.
        Whatever is not saved comes back to the input."""
        try:
            await self._loaded.wait()
            allowed = await self._endpoint_allowed()
        except asyncio.CancelledError:  # nothing was saved
            self._unsent(draft, attachments)
            raise
        if not allowed:
            self._unsent(draft, attachments)
            return
        saved = False

        def on_saved(entries: Sequence[Entry]) -> None:
            nonlocal saved
            saved = True
            self.show_welcome()
            self.refresh_footer()

        # An edit that leaves a branch may ask for its summary first: then it
        # is sent again from there, once the summary is made or declined.
        left = partial(
            self.branches.left_for_edit, message, lambda: self._send(message, draft, attachments)
        )
        hooks = TurnHooks(saved=on_saved, left=left, answering=self._answering)
        tools = self._tool_use()
        try:
            if edited is None:
                await self.conversation.send(message, attachments, tools=tools, hooks=hooks)
            else:
                await self.conversation.edit(edited, message, attachments, tools=tools, hooks=hooks)
        except asyncio.CancelledError:
            if not saved:  # stopped before the message was saved
                self._unsent(draft, attachments)
            raise
        except Exception as error:
            if saved:
                raise  # the reply's failure (the worker's handler says it)
            self.notify(f"Could not save the message, draft kept: {error}", severity="error")
            self._unsent(draft, attachments)

    @property
    def stand_in(self) -> Static:
        return self.query_one("#stand-in", Static)

    def _show_stand_in(self, message: str) -> None:
        """A message sent before the chat view shows the path (just after launch)
        is shown at once all the same, where and as the chat view will show it
        (chat.tcss), and the welcome goes. The row is there from the first frame,
        hidden: showing it lays out again, with nothing to mount. The view
        binding hides it in the frame that shows the message saved."""
        self.stand_in.update(plain(message))
        self.stand_in.display = True
        self.show_welcome()
        # Laid out and painted now, with the emptied input (the key's echo
        # waited for this): not at the update timer's next tick.
        self.refresh(layout=True)
        update_now(self)

    def _unsent(self, draft: str, attachments: list[Attachment]) -> None:
        """The message was not saved: its stand-in goes, the draft comes back."""
        if self.stand_in.display:
            self.stand_in.display = False
            self.show_welcome()
        self.composer.restore(draft, attachments)

    async def _endpoint_allowed(self) -> bool:
        """An imported session may name any host as its endpoint: before the
        first request (and the user's key) goes there, ask once (the answer
        is remembered for that host)."""
        url = self.conversation.endpoint_to_confirm
        if url is None:
            return True
        from tui.screens.dialogs import Confirm

        question = Confirm(
            "Send to this host?",
            f"This session's model {self.conversation.model} is served at {url}: "
            "an endpoint that came with the session, not one you named. "
            "Send your messages there, with your API key, from now on?",
        )
        if not await self.app.push_screen_wait(question):
            self.notify(
                f"Nothing was sent to {url}. To send elsewhere, pick another model or "
                "start Tangents with --api-base.",
                severity="warning",
            )
            return False
        self.conversation.trust_endpoint(url)
        return True

    @work(exclusive=True, group="reply", exit_on_error=False)
    async def _retry(self, entry_id: str | None) -> None:
        await self._loaded.wait()
        if not await self._endpoint_allowed():
            return
        answered = False

        async def answering(answer: Answer) -> AgentResult | None:
            nonlocal answered
            answered = True
            await self.view_settled()  # the view shows the path the reply answers
            self.prompt.focus()
            return await self._answering(answer)

        await self.conversation.retry(
            entry_id, tools=self._tool_use(), hooks=TurnHooks(answering=answering)
        )
        if not answered:
            self.notify("Nothing to retry: send a message first.")

    def _tool_use(self) -> ToolUse:
        """The app's tools for a reply of this screen, side effects asked in the approval dialog."""
        self._tools_offered = self.chat_app.tool_registry
        return ToolUse(self._tools_offered, self._approve)

    async def _answering(self, answer: Answer) -> AgentResult | None:
        """Around every answer the conversation gives here (a send's, a
        retry's, a round's): each reply streams into the chat, its tool calls
        run (side effects after the approval dialog) and the model is asked
        again until it answers. Esc cancels the worker: the loop saves what
        came, every call with a result, and the view shows what was saved.
        After ``/compare``, several models answer at once instead."""
        models = self.compare.take_pending()
        if models is not None:
            await self.compare.fan_out(models)
            return None
        binding = self._binding
        assert binding is not None  # replies start once the path is shown
        binding.begin_reply()
        try:
            result = await answer()
        finally:  # stopped too: show what was saved
            await binding.end_reply()
            self.refresh_footer()
        if result is not None and result.stop == "step_limit":
            self.notify(
                f"Stopped after {result.steps} tool steps (max_tool_steps) while the model was still calling "
                "tools. Send a message to let it continue.",
                severity="warning",
            )
        self._lookup_window(self.conversation.model)
        return result

    def _conversation_event(self, event: Event) -> None:
        """What the screen itself shows of the conversation's events (the
        messages are the :class:`~tui.chat.view_binding.ViewBinding`'s): compaction
        progress, notices."""
        if isinstance(event, (TurnEnded, PositionMoved, CompactionEnded, WindowLearned)):
            self._refresh_context_notes()
        if isinstance(event, CompactionStarted):
            self._compaction_started(event.trigger)
        elif isinstance(event, CompactionEnded):
            self._compaction_ended()
            self.refresh_footer()
        elif isinstance(event, Waiting) and self._compacting:
            self.compaction_status.progress = (
                f"Compacting… retrying in {event.seconds:.0f}s "
                f"({strip_control(event.error.message)}) · {self._cancel_hint}"
            )
        elif isinstance(event, Notice):
            self.notify(event.text, severity="warning")
        elif isinstance(event, WindowLearned):
            self.windows[event.model] = event.tokens
            self.refresh_footer()

    def _refresh_context_notes(self) -> None:
        """Work out again which messages the model does not see whole, and say
        it on their rows. (Before the first reply the tools are not made yet,
        so their share of the window is not counted until then.) After the
        next frame: it should not slow the one that shows a move."""
        self.call_after_refresh(self._work_out_context_notes, self._tools_offered)

    @work(thread=True, exclusive=True, group="context-notes", exit_on_error=False)
    def _work_out_context_notes(self, tools: ToolRegistry | None) -> None:
        """In a thread: building a long path's next request is not for the
        frame that shows a move."""
        notes = self.context_notes.work_out(tools)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._context_notes_found, notes)

    def _context_notes_found(self, notes: dict[str, str]) -> None:
        if self.context_notes.replace(notes) and self.loaded:
            self.chat_view.refresh_context_notes()

    async def _approve(self, call: ToolCallContent, tool: Tool, preview: str) -> Approval:
        """Ask in the approval dialog; a stopped reply closes it."""
        from core.tools.base import Approval
        from tui.screens.approval import QUIET_SECONDS, ApprovalScreen

        screen = ApprovalScreen(
            call,
            tool,
            preview,
            self.app_keymap,
            self.type_from_dialog,
            typing=self.typing_within(QUIET_SECONDS),
        )
        answer: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()

        def answered(approval: Approval | None) -> None:
            if not answer.done():
                answer.set_result(approval or Approval("deny"))

        await self.app.push_screen(screen, callback=answered)
        try:
            return await answer
        finally:
            if answer.cancelled() and screen in self.app.screen_stack:
                with contextlib.suppress(Exception):
                    screen.pop_until_active()
                    screen.dismiss(None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group in ("load", "reply") and event.worker.is_finished:
            self.branches.refresh_branches()
        if event.worker.group == "load" and event.state == WorkerState.ERROR:
            self.notify(f"Could not show the conversation: {event.worker.error}", severity="error")
        if event.worker.group == "reply" and event.state == WorkerState.ERROR:
            self.notify(f"The reply failed: {event.worker.error}", severity="error")
            if self.query("#chat"):
                self.run_worker(self.chat_view.set_entries(self.session.path), group="resync")
            self.refresh_footer()
        if event.worker.group == "reply" and event.state in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            self._compaction_ended()
            self._send_queued()
            cast(Syncing, self.app).sync_soon()  # what it saved goes to the other machines

    # --- actions ------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """An action ``name`` is offered when ``can_name()`` (if defined, here or on
        the branch controller) says so."""
        for owner in (self, self.branches):
            can = getattr(owner, f"can_{action}", None)
            if can is not None:
                return can()
        return True

    def can_stop(self) -> bool:
        return (
            self.replying
            or not self.prompt.has_focus
            or self.branches.editing
            or self.branches.can_undo_branch
        )

    def action_stop(self) -> None:
        """Esc: stop the reply; else back to the input; else cancel the edit or
        the "branch here" that was just done."""
        if self.replying and self.reply_worker is not None:
            self.reply_worker.cancel()
        elif not self.prompt.has_focus:
            self.prompt.focus()
        elif self.branches.cancel_edit():
            pass
        elif self.branches.can_undo_branch:
            self.branches.undo_branch()

    # --- focus: the input, or a message -------------------------------------

    def message_focused(self) -> bool:
        """Is the focus on a row of the chat (a message, or a block inside one)?"""
        focused = self.focused
        return focused is not None and any(node.id == "chat" for node in focused.ancestors)

    def typing_within(self, seconds: float) -> bool:
        """Was text typed or pasted in the last ``seconds``, with no other key since?"""
        return self._typed_at is not None and time.monotonic() - self._typed_at < seconds

    def type_from_dialog(self, event: events.Key | events.Paste) -> None:
        """What a dialog on top passed on (the approval dialog, while the user
        goes on typing): into the input, as it would have been typed there."""
        self._note_typing(event)
        prompt = self.prompt
        if isinstance(event, events.Paste):
            prompt.insert_text(event.text)
        elif event.is_printable and event.character:
            prompt.insert_text(event.character)
        elif event.key == "backspace":
            prompt.action_delete_left()

    def _note_typing(self, event: events.Key | events.Paste) -> None:
        typed = isinstance(event, events.Paste) or event.is_printable or event.key == "backspace"
        self._typed_at = time.monotonic() if typed else None

    def take_typing(self, event: events.Key | events.Paste) -> None:
        """Before a key or a paste is sent to the focused widget (from the app): a
        paste, or a key that none of its keys uses, on a focused message moves the
        focus to the input, where it (and every key after it) is typed. Letters
        always type. Keys typed before anything has the focus (the program has
        just started: the screen gives it once mounted) go to the input too:
        the screen alone would drop them."""
        self._note_typing(event)
        if self.focused is None:
            with contextlib.suppress(NoMatches):
                self.set_focus(self.prompt, scroll_visible=False)
            return
        if not self.message_focused():
            return
        if isinstance(event, events.Key):
            if not (event.is_printable or event.key == "backspace"):
                return
            if any(key in self.active_bindings for key in event.aliases):
                return
        self.set_focus(self.prompt, scroll_visible=False)

    def on_descendant_focus(self) -> None:
        self.refresh_footer()

    def on_descendant_blur(self) -> None:
        self.refresh_footer()

    def _message_keys(self) -> str:
        """The focused message's keys, for the footer."""
        role = getattr(self.branches.focused_entry("user", "assistant"), "message", None)
        role = role.role if role is not None else None
        key = partial(keymap.first_key, keymap=self.app_keymap)
        actions = [("edit_message", "edit")] if role == "user" else []
        if self.branches.focused_note() is not None:
            actions = [("edit_message", "edit note")]
        if role == "assistant":
            if self.branches.can_toggle_message_thinking():
                actions.append(("toggle_message_thinking", "thinking"))
            actions.append(("retry_message", "regenerate"))
        actions += [
            ("branch_here", "branch"),
            ("label_message", "label"),
            ("copy_message", "copy"),
            ("fork_session", "fork"),
        ]
        hints = [f"{key(i)} {word}" for i, word in actions]
        if role is not None:
            hints.insert(1, f"{key('previous_alternative')}/{key('next_alternative')} alternatives")
        hints.append(f"{key('stop')} back")
        return " · ".join(hints)

    def action_retry(self) -> None:
        self.retry()

    def on_assistant_message_retry_requested(self, event: AssistantMessage.RetryRequested) -> None:
        """The retry hint of a failed reply was clicked."""
        self.retry(event.entry_id)

    def retry(self, entry_id: str | None = None) -> None:
        """Answer again: the reply ``entry_id`` (else the last one) gets a new sibling."""
        if self.replying:
            self.notify(f"A reply is still being written: press {self._stop_key} to stop it first.")
            return
        self.reply_worker = self._retry(entry_id)

    def action_focus_messages(self) -> None:
        if not self.loaded:
            return
        widgets = self.chat_view.message_widgets
        if widgets:
            self.set_focus(widgets[-1])

    def action_toggle_thinking(self) -> None:
        self.show_thinking = not self.show_thinking
        if self.loaded:
            self.chat_view.show_thinking = self.show_thinking
        try:
            write_state(show_thinking=self.show_thinking)
        except OSError as error:
            self.notify(f"Could not remember this setting: {error}", severity="warning")
        self.notify("Thinking shown" if self.show_thinking else "Thinking hidden")

    def action_cycle_thinking(self) -> None:
        self.conversation.cycle_thinking()
        self.refresh_footer()

    def action_pick_model(self) -> None:
        from tui.screens.model_picker import ModelPicker

        self.app.push_screen(
            ModelPicker(
                self.conversation.settings, self.conversation.model, self.conversation.target
            ),
            self.set_model,
        )

    def set_model(self, model: str | None) -> None:
        if not model:
            return
        self.conversation.set_model(model.strip())
        self.show_welcome()
        self.refresh_footer()
        self._lookup_window(self.conversation.model)

    # --- branching: the branch controller's actions ------------------------------

    async def action_edit_message(self) -> None:
        await self.branches.action_edit_message()

    def action_toggle_message_thinking(self) -> None:
        self.branches.action_toggle_message_thinking()

    def action_retry_message(self) -> None:
        self.branches.action_retry_message()

    def action_regenerate_with_model(self) -> None:
        self.branches.action_regenerate_with_model()

    def action_branch_here(self) -> None:
        self.branches.action_branch_here()

    def action_previous_alternative(self) -> None:
        self.branches.switch(-1)

    def action_next_alternative(self) -> None:
        self.branches.switch(+1)

    def on_branch_bar_switch_requested(self, event: BranchBar.SwitchRequested) -> None:
        self.branches.switch(event.direction, event.entry_id)

    def action_label_message(self) -> None:
        self.branches.action_label_message()

    def action_copy_message(self) -> None:
        self.branches.action_copy_message()

    def action_copy_code(self) -> None:
        self.branches.action_copy_code()

    def action_fork_session(self) -> None:
        self.branches.action_fork_session()

    def action_open_tree(self) -> None:
        self.branches.action_open_tree()

    # --- compare (tui/chat/compare_actions.py) ------------------------------------------

    def can_compare_alternatives(self) -> bool:
        return self.branches.focused_entry("user", "assistant") is not None

    def action_compare_alternatives(self) -> None:
        entry = self.branches.focused_entry("user", "assistant")
        if entry is not None:
            self.run_worker(self.compare.open_alternatives(entry), exit_on_error=False)

    def can_compare_regenerate(self) -> bool:
        return self.branches.focused_entry("assistant") is not None

    def action_compare_regenerate(self) -> None:
        entry = self.branches.focused_entry("assistant")
        if entry is not None and not self._refuse_while_replying():
            self.reply_worker = self._compare_regenerate(entry)

    @work(exclusive=True, group="reply", exit_on_error=False)
    async def _compare_regenerate(self, entry: Entry) -> None:
        await self._loaded.wait()
        await self.compare.regenerate(entry)

    # --- sessions: the picker, new sessions ---------------------------------

    def action_sessions(self, query: str = "") -> None:
        if self._refuse_while_replying():
            return
        from tui.screens.sessions import SessionPicker

        self.app.push_screen(SessionPicker(self.session, query=query), self._picked)

    async def _picked(self, result: PickerResult | None) -> None:
        self.refresh_title()  # the picker may have renamed this session
        if result is None:
            return
        if result.session_id is not None and result.session_id != self.session.id:
            try:
                session = await Session.open(self.session.store, result.session_id)
            except SessionError as error:
                self.notify(str(error), severity="warning")
            else:
                self.open_session(session)
                return
        if result.current_deleted:
            await self._open_new_session()

    def action_new_session(self) -> None:
        if not self._refuse_while_replying():
            self.run_worker(self._open_new_session(), group="new-session", exit_on_error=False)

    async def _open_new_session(self) -> None:
        await self.drafts.flush()
        if self.prompt.text.strip():
            self.app.notify(
                "The unsent draft stays with the previous session: it comes back when you open it."
            )
        new = await Session.create(self.session.store, cwd=os.getcwd())
        self.open_session(new, came_from=self.conversation)

    def open_session(self, session: Session, came_from: Conversation | None = None) -> None:
        """Show ``session`` on a new chat screen in place of this one (a new
        session keeps the model and endpoint of ``came_from``)."""
        self.chat_app.open_session(session, came_from)

    def _refuse_while_replying(self) -> bool:
        if self.replying:
            self.notify(f"A reply is still being written: press {self._stop_key} to stop it first.")
        return self.replying

    def action_scroll_up(self) -> None:
        if self.loaded:
            self.chat_view.scroll_page_up()

    def action_scroll_down(self) -> None:
        if self.loaded:
            self.chat_view.page_down()

    # --- slash commands -------------------------------------------------------

    async def run_command(self, text: str) -> bool:
        """Run a /command (its handler in :data:`tui.chat.slash.COMMANDS`); False when it
        could not be done (the draft comes back)."""
        invocation = slash.parse(text)
        command = slash.BY_NAME.get(invocation.name)
        if command is None:
            self.notify(
                f"Unknown command /{invocation.name}. /help lists them; start with // to send a message beginning with /.",
                severity="warning",
            )
            return False
        return await command.run(self, invocation.arg, text)

    def _sync_ended(self, outcome: SyncOutcome) -> None:
        """A sync took entries of this session from another machine: they show
        as alternatives where they part from the path here (which stays)."""
        report = outcome.report
        if report is not None and self.session.id in report.received_sessions:
            self.conversation.entries_arrived()
            self.branches.refresh_branches()

    def sync_now(self) -> None:
        """``/sync``: one sync, in a worker; its outcome in one line."""
        self._sync_now()

    @work(group="sync", exit_on_error=False)
    async def _sync_now(self) -> None:
        message, severity = await cast(Syncing, self.app).sync_now()
        self.notify(message, severity=severity, timeout=30)

    def start_compact(self, focus: str | None) -> bool:
        """``/compact [focus]``, in the reply worker; False while a reply is written."""
        if self.replying:
            self.notify(
                f"A reply is still being written: press {self._stop_key} to stop it first.",
                severity="warning",
            )
            return False
        self.reply_worker = self._compact(focus)
        return True

    def start_round(self, rounds: int) -> bool:
        """``/round N``, in the reply worker; False while a reply is written, in
        a session that is not active, or when the round table has fewer than
        two agents to speak."""
        if self.replying:
            self.notify(
                f"A reply is still being written: press {self._stop_key} to stop it first.",
                severity="warning",
            )
            return False
        if not self.session.info.active:
            self.notify(self.read_only_reason(), severity="warning")
            return False
        if len(self.conversation.round_agents()) < 2:
            self.notify(
                "A round needs two agents: ask them first (@Critic @Poet …); /agents lists them.",
                severity="warning",
            )
            return False
        self.reply_worker = self._round(rounds)
        return True

    @work(exclusive=True, group="reply", exit_on_error=False)
    async def _round(self, rounds: int) -> None:
        """The agents answer each other ``rounds`` times; Esc stops the reply
        being written and the round with it."""
        await self._loaded.wait()
        if await self._endpoint_allowed():
            hooks = TurnHooks(answering=self._answering)
            await self.conversation.round(rounds, tools=self._tool_use(), hooks=hooks)

    # --- compaction -----------------------------------------------------------

    @property
    def compaction_status(self) -> CompactionStatus:
        return self.query_one("#compaction-status", CompactionStatus)

    @work(exclusive=True, group="reply", exit_on_error=False)
    async def _compact(self, focus: str | None) -> None:
        """``/compact [focus]``: a reply worker, so Esc stops it and nothing else runs meanwhile.
        The marker appears when the compaction is saved; a failure writes nothing."""
        from core.compaction.run import CompactionError, NothingToCompact

        await self._loaded.wait()
        try:
            await self.conversation.compact(focus)
        except NothingToCompact as error:
            self.notify(f"{str(error)[:1].upper()}{str(error)[1:]}.", severity="warning")
        except CompactionError as error:
            self.notify(f"Compaction failed, nothing was changed: {error}", severity="error")
        except asyncio.CancelledError:
            self.notify("Compaction stopped: nothing was changed.")
            raise

    @property
    def _stop_key(self) -> str:
        """The key hints name for stopping a reply or going back."""
        return keymap.first_key("stop", self.app_keymap)

    @property
    def _cancel_hint(self) -> str:
        key = self._stop_key
        return f"{key[:1].upper()}{key[1:]} to cancel"

    def _compaction_started(self, trigger: str) -> None:
        """From ``/compact`` and from a turn (``on_compact``: ``auto`` or ``overflow``)."""
        self._compacting = True
        self.compaction_status.progress = (
            f"Compacting{_COMPACTING_WHY.get(trigger, '')}… {self._cancel_hint}"
        )

    def _compaction_ended(self) -> None:
        self._compacting = False
        self.compaction_status.progress = ""

    def _send_queued(self) -> None:
        """Send what was typed while a reply streamed or a compaction ran, once nothing
        else runs (Esc and errors included: what was queued is still meant to be
        sent); one message (or edit) at a time, the next when its reply is over."""
        if self.replying or self._compacting or self.branches.asking:
            return
        queued = self._queue.take()
        self.compaction_status.queued = self._queue.texts
        if queued is not None:
            self._start_send(queued.message, queued.draft, queued.attachments, queued.edited)
