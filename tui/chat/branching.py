"""Branching from the chat: the actions on a focused message, the tree screen,
and the branch summary offered when the user leaves a branch.

An object the :class:`~tui.chat.chat_screen.ChatScreen` owns. It uses the
screen's session, chat view, composer and reply worker through
:class:`BranchHost`, the protocol of what it needs: the screen imports this
module, never the other way round, not even for a type. What is not UI is the conversation's
(:class:`~core.chat.conversation.Conversation`): the session tree (read once, kept
in step), moving the leaf and whether a branch was left, branch summaries,
forks and labels. Here: which message is focused, the dialogs, the view.

Decisions:

- An *alternative* of a message is another message at the same point
  (:meth:`core.branching.tree.SessionTree.alternatives`: siblings, looking through a
  model change or branch summary written in front of one), oldest first.
- Switching to an alternative moves the leaf to its newest descendant (the
  newest child at every step: :meth:`~core.branching.tree.SessionTree.deepest_leaf`).
- The tree screen's Enter moves the leaf to the chosen entry itself.
- Editing moves nothing until the edit is sent; then the leaf goes to the
  edited message's parent and the new text is appended there.
- Regenerating does not offer a branch summary (it would sit between the
  question and its new answer); every other move that leaves a branch does,
  once per branch left.
- Copy (``c``) copies the message's text (a reply's Markdown source); ``C``
  copies its last fenced code block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from textual.worker import Worker

from core.branching.tree import SessionTree, preview_text
from core.sanitize import strip_control
from core.sessions.attachments import Attachment
from core.sessions.entries import Entry, Note
from tui import keymap
from tui.chat.message_text import last_code_block, message_text
from tui.chat.slash_handlers import note_arg
from tui.widgets._context import BranchInfo
from tui.widgets._text import one_line
from tui.widgets.thinking_block import ThinkingBlock

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel
    from textual.widget import Widget

    from core.chat.conversation import Conversation
    from core.sessions.session import Session
    from tui.chat.composer import Composer
    from tui.widgets.chat_view import ChatView
    from tui.widgets.prompt_input import PromptInput

NOTE_CHARS = 50


class BranchHost(Protocol):
    """What the branch actions use of the chat screen."""

    conversation: Conversation
    reply_worker: Worker | None
    """The screen's one worker for replies and summaries (a summary replaces it)."""

    @property
    def app(self) -> App: ...
    @property
    def focused(self) -> Widget | None: ...
    @property
    def session(self) -> Session: ...
    @property
    def loaded(self) -> bool: ...
    @property
    def replying(self) -> bool: ...
    @property
    def chat_view(self) -> ChatView: ...
    @property
    def composer(self) -> Composer: ...
    @property
    def prompt(self) -> PromptInput: ...
    def notify(self, message: str, *, severity: SeverityLevel = ...) -> None: ...
    def run_worker(
        self,
        work: Coroutine[Any, Any, None],
        *,
        group: str = ...,
        exit_on_error: bool = ...,
        exclusive: bool = ...,
    ) -> Worker[None]: ...
    def call_after_refresh(self, callback: Callable[[], object]) -> bool: ...
    async def view_settled(self) -> None: ...
    def show_welcome(self) -> None: ...
    def refresh_title(self) -> None: ...
    def refresh_footer(self) -> None: ...
    def retry(self, entry_id: str | None = None) -> None: ...
    def set_model(self, model: str | None) -> None: ...
    def open_session(self, session: Session) -> None: ...


class BranchController:
    """The branching half of the chat screen, which owns one and runs its actions
    (the screen's ``action_*`` and ``can_*`` for these keys come here)."""

    def __init__(self, screen: BranchHost) -> None:
        self.screen = screen
        self._undo_leaf: str | None = None
        """Where the leaf was before "branch here", while Esc can still undo it."""
        self._asked_about: set[str] = set()
        """Leaves of branches already offered a summary: asked once per branch left."""
        self.asking = False
        """The branch summary question waits for an answer (what was queued waits too)."""

    def _key(self, action_id: str) -> str:
        """The key a hint names for ``action_id``, the config's keymap applied."""
        return keymap.first_key(action_id, self.screen.conversation.settings.keymap)

    # --- the tree (the conversation's) ---------------------------------------------

    @property
    def tree(self) -> SessionTree | None:
        """The session tree once read (after the chat shows); None before."""
        return self.screen.conversation.known_tree

    def branch_info(self, entry_id: str) -> BranchInfo | None:
        """``◀ i/n ▶`` and the label of a user or assistant message (for the chat view)."""
        tree = self.tree
        if tree is None or entry_id not in tree:
            return None
        message = tree.entry(entry_id).message
        if message is None or message.role not in ("user", "assistant"):
            return None
        alternatives = tree.alternatives(entry_id)
        label = tree.labels.get(entry_id)
        if len(alternatives) < 2 and not label:
            return None
        return BranchInfo(alternatives.index(entry_id), len(alternatives), label)

    def refresh_branches(self) -> Worker:
        return self.screen.run_worker(
            self._refresh_branches_run(), group="branch-tree", exit_on_error=False
        )

    async def _refresh_branches_run(self) -> None:
        """Bring the tree up to date and show alternatives and labels on the mounted rows."""
        await self.screen.conversation.tree()
        self.screen.refresh_title()
        if self.screen.loaded:
            self.screen.chat_view.refresh_branch_info()

    # --- the focused message -------------------------------------------------------

    def focused_entry(self, *roles: str) -> Entry | None:
        """The entry of the focused chat row (a message with one of ``roles``, if given)."""
        entry = getattr(self.screen.focused, "entry", None)
        if not isinstance(entry, Entry) or not self.screen.loaded:
            return None
        if roles and (entry.message is None or entry.message.role not in roles):
            return None
        return entry

    def can_edit_message(self) -> bool:
        return self.focused_entry("user") is not None or self.focused_note() is not None

    def focused_note(self) -> Entry | None:
        """The focused row's entry when it is a pinned note's."""
        entry = self.focused_entry()
        return entry if entry is not None and isinstance(entry.payload, Note) else None

    def can_retry_message(self) -> bool:
        return self.focused_entry("assistant") is not None

    can_regenerate_with_model = can_retry_message

    def can_branch_here(self) -> bool:
        return self.focused_entry() is not None

    can_label_message = can_copy_message = can_copy_code = can_fork_session = can_branch_here

    def can_previous_alternative(self) -> bool:
        return self._alternative(-1) is not None

    def can_next_alternative(self) -> bool:
        return self._alternative(+1) is not None

    def _alternative(self, direction: int, entry_id: str | None = None) -> str | None:
        tree = self.tree
        if entry_id is None:
            entry = self.focused_entry("user", "assistant")
            entry_id = entry.id if entry is not None else None
        if tree is None or entry_id is None or entry_id not in tree:
            return None
        alternatives = tree.alternatives(entry_id)
        index = alternatives.index(entry_id) + direction
        return alternatives[index] if 0 <= index < len(alternatives) else None

    # --- edit -------------------------------------------------------------------------

    async def action_edit_message(self) -> None:
        note = self.focused_note()
        if note is not None and isinstance(note.payload, Note):
            if self.screen.composer.edit_changed:
                # What was changed in the edit under way would be replaced: it stays.
                self.screen.notify(
                    f"An edit is not sent yet: {self._key('send')} sends it,"
                    f" {self._key('stop')} cancels it."
                )
                return
            self._undo_leaf = None
            self.screen.composer.start_note_edit(note, note_arg(note.payload))
            return
        entry = self.focused_entry("user")
        if entry is not None:
            await self.edit(entry)

    async def edit(self, entry: Entry) -> None:
        """Put a user message in the input; sending it makes an alternative of it."""
        message = entry.message
        if message is None:
            return
        attachments: list[Attachment] = []
        for number, image in enumerate(message.images, 1):
            blob = await self.screen.session.store.get_blob(image.sha256)
            if blob is not None:
                attachments.append(Attachment(f"image {number}", blob))
        self._undo_leaf = None
        self.screen.composer.start_edit(entry, self._message_number(entry), attachments)

    def _message_number(self, entry: Entry) -> int:
        """``entry``'s number among the messages of the path (itself included when on it)."""
        number = 0
        for on_path in self.screen.session.path:
            if on_path.message is not None:
                number += 1
            if on_path.id == entry.id:
                return number
            if on_path.id == entry.parent_id:
                return number + 1
        return number + 1

    @property
    def editing(self) -> bool:
        return self.screen.composer.editing is not None

    def take_edit(self) -> Entry | None:
        """The message being edited, handed to the send (which leaves edit mode
        and any "continuing from" note behind)."""
        self._undo_leaf = None
        editing = self.screen.composer.take_edit()
        self.screen.composer.set_note(None)
        return editing

    def cancel_edit(self) -> bool:
        """Leave edit mode (Esc, or an empty input sent); False when not editing."""
        if not self.screen.composer.cancel_edit():
            return False
        self.screen.notify("Edit cancelled.")
        return True

    async def left_for_edit(
        self, message: str, send: Callable[[], Worker], old_leaf: str | None, left: bool
    ) -> bool:
        """An edit moved to the edited message's parent, before its text is saved
        (``TurnHooks.left``, in the send worker): show the path there. False
        when a branch summary comes first: ``send`` then starts the send again
        once the summary is made (or declined), and until then the line above
        the input shows what waits to be sent."""
        await self.show_moved()
        self.screen.composer.set_note(
            f"✎ sending “{one_line(message, 60)}” after the branch summary"
        )
        if self.offer_summary(old_leaf, left, self.screen.session.leaf_id, then=send):
            return False
        self.screen.composer.set_note(None)
        return True

    # --- moving the leaf --------------------------------------------------------------

    async def move_leaf(
        self, entry_id: str | None, show: str | None = None, *, focus_show: bool = False
    ) -> tuple[str | None, bool]:
        """Make ``entry_id`` the current position (persisted) and show it
        (:meth:`show_moved`); returns the previous leaf and whether the move
        left a branch (:meth:`core.chat.conversation.Conversation.move_to`)."""
        old_leaf = self.screen.session.leaf_id
        left = await self.screen.conversation.move_to(entry_id)
        await self.show_moved(show, focus_show=focus_show)
        return old_leaf, left

    async def show_moved(self, show: str | None = None, *, focus_show: bool = False) -> None:
        """Show the path of the new position scrolled to the row of ``show``, and
        give the input the focus (what is typed next continues from there), or
        ``show``'s row with ``focus_show`` (the next ◀ ▶ is one key)."""
        await self.screen.view_settled()  # the view shows the new path
        self.screen.show_welcome()
        self.screen.call_after_refresh(
            self.screen.refresh_footer
        )  # after the new path's first frame: it sums the path
        if show is not None and focus_show:
            if await self.screen.chat_view.focus_entry(show) is not None:
                return
        elif show is not None:
            await self.screen.chat_view.scroll_to_entry(show)
        self.screen.prompt.focus()

    def move_to(
        self,
        entry_id: str | None,
        show: str | None = None,
        *,
        undoable: str | None = None,
        then_edit: Entry | None = None,
        focus_show: bool = False,
    ) -> Worker:
        return self.screen.run_worker(
            self._move_to_run(
                entry_id, show, undoable=undoable, then_edit=then_edit, focus_show=focus_show
            ),
            group="branch-move",
            exit_on_error=False,
        )

    async def _move_to_run(
        self,
        entry_id: str | None,
        show: str | None = None,
        *,
        undoable: str | None = None,
        then_edit: Entry | None = None,
        focus_show: bool = False,
    ) -> None:
        """Move the leaf (moves run one after another), then offer a summary of the
        branch left. ``undoable`` is the note saying where the next message goes,
        while Esc can move back; ``then_edit`` a user message to edit from there."""
        if self.screen.replying:
            self.screen.notify(
                f"A reply or summary is being written: press {self._key('stop')} to stop it first."
            )
            return
        if self.screen.composer.edit_changed:
            # Moving would take the edited message away: the edit stays, the move waits.
            self.screen.notify(
                f"The edited message is not sent: {self._key('send')} sends it,"
                f" {self._key('stop')} cancels the edit; then move."
            )
            return
        if self.editing:
            self.screen.composer.cancel_edit()
        old_leaf, left = await self.move_leaf(entry_id, show, focus_show=focus_show)
        self._undo_leaf = old_leaf if undoable else None
        back = f"{undoable} · {self._key('stop')} goes back" if undoable else None
        self.screen.composer.set_note(back)
        if then_edit is not None:
            await self.edit(then_edit)
        self.offer_summary(old_leaf, left, entry_id)

    @property
    def can_undo_branch(self) -> bool:
        return self._undo_leaf is not None

    def undo_branch(self) -> Worker:
        return self.screen.run_worker(
            self._undo_branch_run(), group="branch-move", exit_on_error=False
        )

    async def _undo_branch_run(self) -> None:
        """Esc after "branch here": back where the leaf was, as if nothing happened."""
        old_leaf, self._undo_leaf = self._undo_leaf, None
        self.screen.composer.set_note(None)
        await self.move_leaf(old_leaf, old_leaf)

    def offer_summary(
        self,
        old_leaf: str | None,
        left: bool,
        new_entry: str | None,
        then: Callable[[], Worker] | None = None,
    ) -> bool:
        """Per the ``branch_summary`` setting (ask, always, never), summarize the
        branch left behind (``left``: the move left one), at the new position, in
        the reply worker (Esc stops it); ``then`` starts what comes next. False
        when nothing is offered."""
        mode = self.screen.conversation.settings.branch_summary
        if mode == "never" or not left or old_leaf is None or old_leaf in self._asked_about:
            return False
        self._asked_about.add(old_leaf)

        def answered(summarize: bool | None) -> None:
            self.asking = False
            self.screen.reply_worker = self._summarize(old_leaf, new_entry, bool(summarize), then)

        if mode == "always":
            answered(True)
        else:
            from tui.screens.dialogs import Confirm

            self.asking = True
            question = Confirm(
                "Leaving a branch",
                "Summarize the branch you are leaving? The summary is added here, so the model knows what was tried.",
            )
            self.screen.app.push_screen(question, answered)
        return True

    def _summarize(
        self,
        old_leaf: str,
        new_entry: str | None,
        summarize: bool,
        then: Callable[[], Worker] | None,
    ) -> Worker:
        return self.screen.run_worker(
            self._summarize_run(old_leaf, new_entry, summarize, then),
            group="reply",
            exit_on_error=False,
            exclusive=True,
        )

    async def _summarize_run(
        self,
        old_leaf: str,
        new_entry: str | None,
        summarize: bool,
        then: Callable[[], Worker] | None,
    ) -> None:
        from core.chat.branch_summary import BranchSummaryError

        if summarize:
            note = self.screen.composer.note
            self.screen.composer.set_note(
                f"⎇ summarizing the branch you left… · {self._key('stop')} stops"
            )
            try:
                await self.screen.conversation.summarize_branch(old_leaf, new_entry)
            except BranchSummaryError as error:
                self.screen.notify(f"No branch summary: {error}", severity="warning")
            except asyncio.CancelledError:
                if then is None:
                    raise
                # Esc skips the summary only: what was being sent still goes.
                self.screen.notify("Branch summary skipped.")
                self.screen.reply_worker = then()
                raise
            else:
                self.screen.notify("Branch summary added.")
            finally:  # the note from before, unless it said what waited (sent now)
                self.screen.composer.set_note(note if then is None else None)
        if then is not None:
            self.screen.composer.set_note(None)  # what waited is sent now
            self.screen.reply_worker = then()  # replaces this worker, which ends here

    # --- the other actions ----------------------------------------------------------------

    def can_toggle_message_thinking(self) -> bool:
        focused = self.screen.focused
        return (
            self.focused_entry("assistant") is not None
            and focused is not None
            and bool(focused.query(ThinkingBlock))
        )

    def action_toggle_message_thinking(self) -> None:
        focused = self.screen.focused
        if focused is not None:
            for block in focused.query(ThinkingBlock):
                block.action_expand_or_collapse()

    def action_retry_message(self) -> None:
        entry = self.focused_entry("assistant")
        if entry is not None:
            self.screen.retry(entry.id)

    def action_regenerate_with_model(self) -> None:
        from tui.screens.model_picker import ModelPicker

        entry = self.focused_entry("assistant")
        if entry is None:
            return

        def chosen(model: str | None) -> None:
            if model:
                self.screen.set_model(model)
                self.screen.retry(entry.id)

        self.screen.app.push_screen(
            ModelPicker(
                self.screen.conversation.settings,
                self.screen.conversation.model,
                self.screen.conversation.target,
            ),
            chosen,
        )

    def action_branch_here(self) -> None:
        entry = self.focused_entry()
        if entry is None:
            return
        if entry.id == self.screen.session.leaf_id:
            self.screen.notify("This is already where the next message goes.")
            return
        self.move_to(entry.id, entry.id, undoable=f"↳ continuing from “{_short(entry)}”")

    def switch(self, direction: int, entry_id: str | None = None) -> None:
        """To the previous (-1) or next alternative of ``entry_id`` (else the
        focused message, whose place the alternative's row takes in the focus)."""
        target = self._alternative(direction, entry_id)
        if target is None or self.tree is None:
            return
        self.move_to(self.tree.deepest_leaf(target), target, focus_show=entry_id is None)

    def action_label_message(self) -> None:
        from tui.screens.dialogs import TextPrompt

        entry = self.focused_entry()
        if entry is None or self.tree is None:
            return
        current = self.tree.labels.get(entry.id)
        prompt = TextPrompt(
            f"Label for “{_short(entry)}”",
            current or "",
            placeholder="a short name (empty removes the label)",
        )

        def label_chosen(label: str | None) -> None:
            self.label(entry, label)

        self.screen.app.push_screen(prompt, label_chosen)

    def label(self, entry: Entry, label: str | None) -> Worker:
        """Save ``entry``'s label (None: leave it as it is; empty: remove it)."""
        return self.screen.run_worker(
            self._label_run(entry, label), group="branch-label", exit_on_error=False
        )

    async def _label_run(self, entry: Entry, label: str | None) -> None:
        if label is None:
            return
        label = " ".join(strip_control(label).split())
        await self.screen.conversation.set_label(entry.id, label or None)
        self.screen.chat_view.refresh_branch_info()
        self.screen.notify(f"Labelled: {label}" if label else "Label removed.")

    def action_copy_message(self) -> None:
        entry = self.focused_entry()
        if entry is not None:
            self._copy(message_text(entry), "the message")

    def action_copy_code(self) -> None:
        entry = self.focused_entry()
        if entry is None:
            return
        code = last_code_block(message_text(entry))
        if code is None:
            self.screen.notify("This message has no code block.", severity="warning")
            return
        self._copy(code, "the last code block")

    def _copy(self, text: str, what: str) -> None:
        if not text:
            self.screen.notify("Nothing to copy.", severity="warning")
            return
        self.screen.app.copy_to_clipboard(text)
        self.screen.notify(f"Copied {what} ({len(text):,} characters).")

    def action_fork_session(self) -> None:
        entry = self.focused_entry()
        if entry is not None:
            self.fork(entry.id)

    def fork(self, entry_id: str, first_k: int | None = None, last_n: int | None = None) -> Worker:
        return self.screen.run_worker(
            self._fork_run(entry_id, first_k, last_n), group="branch-fork", exit_on_error=False
        )

    async def _fork_run(
        self, entry_id: str, first_k: int | None = None, last_n: int | None = None
    ) -> None:
        """Open a new session holding the path up to ``entry_id`` (optionally trimmed)."""
        forked = await self.screen.conversation.fork(entry_id, first_k, last_n)
        self.screen.notify(f"Forked into a new session ({len(forked.path)} entries).")
        self.screen.app.call_later(
            self.screen.open_session, forked
        )  # not from this screen's worker: the screen goes

    def action_open_tree(self) -> None:
        if self.screen.loaded:
            self._open_tree()

    def _open_tree(self) -> Worker:
        return self.screen.run_worker(
            self._open_tree_run(), group="branch-tree-screen", exit_on_error=False
        )

    async def _open_tree_run(self) -> None:
        from tui.screens.tree import TreeScreen

        tree = await self.screen.conversation.tree()

        def chosen(entry_id: str | None) -> None:
            if entry_id is None or entry_id == self.screen.session.leaf_id:
                return
            entry = tree.entry(entry_id)
            if entry.message is not None and entry.message.role == "user":
                # Continuing from a question would put two user messages in a row:
                # edit it instead (from its parent), as an alternative.
                self.move_to(entry.parent_id, entry.parent_id, then_edit=entry)
            else:
                self.move_to(entry_id, entry_id)

        self.screen.app.push_screen(TreeScreen(tree), chosen)


def _short(entry: Entry) -> str:
    return preview_text(entry, NOTE_CHARS) or entry.type
