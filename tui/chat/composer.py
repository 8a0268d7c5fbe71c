"""Where the next message is written: the input, the files attached to it,
the slash command hints, and the hand-over to $EDITOR.

The chat screen reads the finished message from :class:`PromptInput.Submitted`
(which bubbles up through here) and takes the attachments with
:meth:`Composer.take_attachments`; what could not be sent comes back with
:meth:`Composer.restore`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static, TextArea

from core.sanitize import strip_control
from core.sessions.attachments import Attachment, AttachmentError
from core.sessions.entries import Entry, Note
from core.sessions.file_attachments import load_attachment
from core.sessions.sniff import kind_of
from core.settings import Settings
from tui import keymap
from tui.chat import mentions, slash
from tui.chat.editor import EditorError, edit_text
from tui.widgets.prompt_input import PromptInput


class Composer(Vertical):
    DEFAULT_CSS = """
    Composer {
        height: auto;
        & > #attachments {
            height: auto;
            padding: 0 1;
            color: $text-accent;
        }
        & > #read-only {
            height: auto;
            padding: 0 1;
            color: $text-warning;
            text-style: bold;
        }
        & > #composer-note {
            height: 1;
            padding: 0 1;
            color: $text-accent;
        }
        & > #slash-hint {
            height: auto;
            max-height: 8;
            padding: 0 2;
            background: $boost;
        }
    }
    """

    def __init__(
        self,
        settings: Settings,
        current_model: Callable[[], str],
        *,
        on_draft: Callable[[str], None] | None = None,
        id: str | None = None,
    ) -> None:
        """``on_draft(text)`` is told every change of the input's text."""
        super().__init__(id=id)
        self.settings = settings
        self.current_model = current_model
        self.on_draft = on_draft
        self.attachments: list[Attachment] = []
        self.note: str | None = None
        self.model_names: list[str] = []
        """Completions for ``/model``, loaded the first time it is typed."""
        self.editing: Entry | None = None
        """The user message being edited: what is sent next is its alternative,
        whatever happens to the text meanwhile, until :meth:`cancel_edit`. Or a
        note entry: what is sent next pins a new note (:attr:`editing_note`)."""
        self._edit_original = ""
        self._draft_before_edit = ""
        self._attachments_before_edit: list[Attachment] = []

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    def compose(self) -> ComposeResult:
        yield Static(id="read-only", markup=False)
        yield Static(id="composer-note", markup=False)
        yield Static(id="attachments")
        yield Static(id="slash-hint")
        names = mentions.mention_names([agent.name for agent in self.settings.agents])
        yield PromptInput(
            suggester=lambda text: slash.suggest(text, self.model_names),
            mentions=lambda before: mentions.complete(before, names),
            id="prompt",
        )

    def on_mount(self) -> None:
        self._show_attachments()
        self.set_note(None)
        self.set_read_only(None)
        self.query_one("#slash-hint").display = False
        send, newline = (self._key(i) for i in ("send", "newline"))
        self.prompt.placeholder = f"Message ({send} sends, {newline} newline, / for commands)"

    def _key(self, action_id: str) -> str:
        """The key a hint names for ``action_id``, the config's keymap applied."""
        return keymap.first_key(action_id, self.settings.keymap)

    def set_note(self, note: str | None) -> None:
        """One line above the input saying what the next message does (editing, continuing from...)."""
        if note == self.note and self.is_mounted:
            return  # an update lays the whole screen out again
        self.note = note
        line = self.query_one("#composer-note", Static)
        line.display = bool(note)
        line.update(Content(strip_control(note or "")))

    def set_read_only(self, status: str | None) -> None:
        """A line above the input that stays while the session is not active
        (``status``: paused, completed, cancelled), saying how to go on; None
        hides it. What is typed stays in the input either way."""
        line = self.query_one("#read-only", Static)
        line.display = status is not None
        if status is not None:
            line.update(
                Content(
                    f"⊘ {strip_control(status)}: read-only · /status active reactivates it"
                    " · /fork copies it"
                )
            )

    # --- editing a sent message ------------------------------------------------

    def start_edit(self, entry: Entry, number: int, attachments: Sequence[Attachment]) -> None:
        """Put message ``number`` of the path (``entry``) in the input to be edited;
        the draft that was there comes back if the edit is cancelled."""
        self._begin_edit(
            entry,
            entry.message.text if entry.message is not None else "",
            f"✎ editing message {number} · {self._key('stop')} cancels"
            f" · {self._key('send')} sends it as an alternative",
            attachments,
        )

    def start_note_edit(self, entry: Entry, text: str) -> None:
        """Put the pinned note of ``entry`` in the input as ``text`` (what
        ``/note`` takes: ``TEXT depth N``); sending it pins a new note."""
        self._begin_edit(
            entry,
            text,
            f"✎ editing the note · {self._key('send')} pins it · off removes it"
            f" · {self._key('stop')} cancels",
        )

    def _begin_edit(
        self, entry: Entry, text: str, line: str, attachments: Sequence[Attachment] = ()
    ) -> None:
        if self.editing is None:
            self._draft_before_edit = self.prompt.draft
            self._attachments_before_edit = self.attachments
        self.editing = entry
        self._edit_original = text
        self.attachments = list(attachments)
        self._show_attachments()
        self.prompt.set_draft(text)
        self.set_note(line)
        self.prompt.focus()

    @property
    def editing_note(self) -> bool:
        """Is the pinned note being edited (rather than a message)?"""
        return self.editing is not None and isinstance(self.editing.payload, Note)

    @property
    def edit_changed(self) -> bool:
        """Is a message (or the note) being edited, its text changed and not sent yet?"""
        return self.editing is not None and self.prompt.draft != self._edit_original

    def take_edit(self) -> Entry | None:
        """The message being edited, handed to the send, which leaves edit mode;
        the draft from before the edit comes back to the (sent, so empty) input."""
        editing = self.editing
        if editing is not None:
            self._end_edit()
        return editing

    def cancel_edit(self) -> bool:
        """Leave edit mode, the draft from before it back; False when not editing."""
        if self.editing is None:
            return False
        self._end_edit()
        return True

    def _end_edit(self) -> None:
        """Out of edit mode, with the draft and attachments set aside when it began."""
        self.editing = None
        self._edit_original = ""
        self.set_note(None)
        self.prompt.set_draft(self._draft_before_edit)
        self.attachments, self._attachments_before_edit = self._attachments_before_edit, []
        self._draft_before_edit = ""
        self._show_attachments()

    # --- attachments ---------------------------------------------------------

    def take_attachments(self) -> list[Attachment]:
        taken, self.attachments = self.attachments, []
        self._show_attachments()
        return taken

    def restore(self, draft: str, attachments: Sequence[Attachment] = ()) -> None:
        """Put back a message that could not be sent, ahead of anything new."""
        self.prompt.restore(draft)
        self.attachments = [*attachments, *self.attachments]
        self._show_attachments()

    def detach(self) -> None:
        self.attachments = []
        self._show_attachments()

    def _show_attachments(self) -> None:
        bar = self.query_one("#attachments", Static)
        bar.display = bool(self.attachments)
        if self.attachments:
            labels = "  ".join(f"📎 {strip_control(a.label)}" for a in self.attachments)
            bar.update(Content.assemble(labels, ("   /detach to remove", "$text-muted")))

    @on(PromptInput.FilePathPasted)
    def _file_pasted(self, event: PromptInput.FilePathPasted) -> None:
        event.stop()
        self.attach(event.path, paste=event.text, refuse=self._refusal)

    def _refusal(self, attachment: Attachment) -> str | None:
        """Why the current model cannot take the attachment's kind, if so."""
        from core.providers.capabilities import refusal

        kind = kind_of(attachment.blob.media_type)
        return refusal(self.current_model(), [kind], self.settings)

    @work(group="attach", exit_on_error=False)
    async def attach(
        self,
        path: Path,
        *,
        paste: str | None = None,
        restore: str | None = None,
        refuse: Callable[[Attachment], str | None] | None = None,
    ) -> None:
        """Attach a file (image, audio, PDF) in the background; ``refuse`` says
        why the model cannot take it, if so. On failure nothing is lost: a
        pasted path goes into the draft as text, an /attach command comes back.
        A paste is recognised by its suffix; its bytes decide its kind."""
        try:
            attachment = await asyncio.to_thread(load_attachment, path)
            refused = refuse(attachment) if refuse is not None else None
            if refused is not None:
                raise AttachmentError(refused)
        except AttachmentError as error:
            self.notify(f"Not attached: {error}", severity="error")
            if paste is not None:
                self.prompt.insert_text(paste)
            elif restore is not None:
                self.prompt.restore(restore)
            return
        if any(a.blob.sha256 == attachment.blob.sha256 for a in self.attachments):
            self.notify(f"{attachment.name} is already attached")
            return
        self.attachments.append(attachment)
        self._show_attachments()

    # --- slash command hints ---------------------------------------------------

    @on(TextArea.Changed, "#prompt")
    def _draft_changed(self, event: TextArea.Changed) -> None:
        event.stop()  # handled here; nothing above listens (two hops at every key)
        text = self.prompt.text
        if self.on_draft is not None:
            self.on_draft(text)
        hint = self.query_one("#slash-hint", Static)
        commands = slash.matching(text)
        hint.display = bool(commands)
        if commands:
            hint.update(
                Content("\n").join(
                    Content.assemble(
                        (f"/{c.name} {c.args}".rstrip(), "bold"),
                        "  ",
                        (c.description, "$text-muted"),
                    )
                    for c in commands
                )
            )
        if text.lstrip().lower().startswith("/model ") and not self.model_names:
            self._load_model_names()

    @work(thread=True, exclusive=True, group="models", exit_on_error=False)
    def _load_model_names(self) -> None:
        from tui.models import known_models

        models = known_models(self.settings, [self.current_model()])
        self.app.call_from_thread(setattr, self, "model_names", models)

    # --- $EDITOR -------------------------------------------------------------------

    @on(PromptInput.EditorRequested)
    def _edit_draft(self, event: PromptInput.EditorRequested) -> None:
        event.stop()
        try:
            edited = edit_text(self.app, self.prompt.draft)
        except EditorError as error:
            self.notify(str(error), severity="warning")
            return
        if edited is None:
            self.notify("The editor exited with an error: the draft is unchanged.")
            return
        self.prompt.set_draft(edited.rstrip("\n"))
