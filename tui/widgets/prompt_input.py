"""The message input: a multi-line TextArea where Enter sends.

Big pastes are held aside and shown as one short placeholder, expanded again
when the message is sent: a TextArea re-wraps a long line on every keystroke
(a 1 MB line costs seconds per key), so the draft itself stays small.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from core.sanitize import strip_control
from core.sessions.attachments import pasted_file_path
from tui import keymap

LARGE_PASTE_CHARS = 10_000
LARGE_PASTE_LINES = 500

Suggester = Callable[[str], str]

MentionCompleter = Callable[[str], "tuple[int, str] | None"]
"""The completion of the ``@prefix`` the text before the cursor ends with: how
many typed characters it replaces and with what (None: no ``@prefix`` there)."""


class PromptInput(TextArea):
    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 12;
        border: tall $border-blurred;
        padding: 0 1;
    }
    PromptInput:focus {
        border: tall $border;
    }
    """

    BINDINGS = keymap.bindings("input")

    class Submitted(Message):
        """Enter was pressed; ``text`` is the draft with held-aside pastes
        expanded. The input is already empty: :meth:`restore` puts it back."""

        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

    class FilePathPasted(Message):
        """A paste named an existing image, audio file or PDF; ``text`` is what was pasted,
        to insert after all if the file cannot be attached."""

        def __init__(self, prompt: PromptInput, path: Path, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.path = path
            self.text = text

    class EditorRequested(Message):
        """The user asked to edit the draft in $EDITOR."""

    def __init__(
        self,
        *,
        suggester: Suggester | None = None,
        mentions: MentionCompleter | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(
            soft_wrap=True,
            tab_behavior="focus",
            compact=True,
            highlight_cursor_line=False,
            placeholder="Message",
            id=id,
        )
        self.suggester = suggester
        self.mentions = mentions
        self._held: dict[str, str] = {}
        self._paste_count = 0
        self.echo_with_message = False
        """Set by Enter: the emptied input is painted with the screen update that
        shows the message sent, not at once in a frame of its own before it, as
        a key's echo is (the app reads and clears it when the key is handled)."""

    @property
    def draft(self) -> str:
        """What will be sent: the text with placeholders expanded."""
        text = self.text
        for token, held in self._held.items():
            text = text.replace(token, held)
        return text

    def set_draft(self, text: str) -> None:
        """Replace the whole draft (e.g. with the $EDITOR result, which was
        given the expanded draft: a result that is large is held aside whole)."""
        self.reset()
        self.insert_text(text)

    def reset(self) -> None:
        self._held.clear()
        self.clear()

    def restore(self, text: str) -> None:
        """Put a submitted draft back (it could not be sent), ahead of anything
        typed since."""
        if not self.text:
            self.set_draft(text)
            return
        self.move_cursor((0, 0))
        self.insert_text(text)
        self.move_cursor(self.document.end)

    def insert_text(self, text: str) -> None:
        """Insert at the cursor as a paste would; large text is held aside."""
        text = strip_control(text)
        lines = text.count("\n") + 1
        if len(text) > LARGE_PASTE_CHARS or lines > LARGE_PASTE_LINES:
            self._paste_count += 1
            token = f"[paste #{self._paste_count}: {lines:,} lines, {_size(len(text.encode()))}]"
            self._held[token] = text
            text = token
        result = self.replace(text, *self.selection, maintain_selection_offset=False)
        self.move_cursor(result.end_location)

    def update_suggestion(self) -> None:
        at_end = self.cursor_location == self.document.end
        self.suggestion = self.suggester(self.text) if self.suggester and at_end else ""

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        event.stop()  # nothing above listens: three hops at every key

    async def _on_key(self, event: events.Key) -> None:
        """Run this input's own bindings here, in its queue, rather than as the
        key bubbles up to the app: keys arrive in bursts (fast typing, tmux),
        and Enter must send exactly the keys typed before it, no more, no less."""
        own = self._bindings.key_to_bindings
        if not any(key in own for key in event.aliases):
            return  # typed text: none of this input's keys (the screen's are not asked)
        await keymap.run_own_binding(self, event)

    async def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()
        event.stop()
        if self.read_only:
            return
        path = pasted_file_path(event.text)
        if path is not None:
            self.post_message(self.FilePathPasted(self, path, event.text))
            return
        self.insert_text(event.text)

    def action_submit(self) -> None:
        """Hand the draft over and start afresh at once, so keys typed while it
        is being saved start the next draft (the screen restores it on failure)."""
        text = self.draft
        self.post_message(self.Submitted(self, text))  # before the Changed that emptying posts
        self.reset()
        self.echo_with_message = True

    def action_newline(self) -> None:
        self.replace("\n", *self.selection, maintain_selection_offset=False)

    def action_complete(self) -> None:
        """Complete an ``@name`` right before the cursor, else the suggestion
        (a /command, a model), else move the focus on."""
        if self._complete_mention():
            return
        if self.suggestion:
            self.insert(self.suggestion)
        else:
            self.screen.focus_next()

    def _complete_mention(self) -> bool:
        row, column = self.cursor_location
        if self.mentions is None or self.selected_text:
            return False
        completion = self.mentions(self.document.get_line(row)[:column])
        if completion is None:
            return False
        typed, replacement = completion
        self.replace(replacement, (row, column - typed), (row, column))
        return True

    def action_open_editor(self) -> None:
        self.post_message(self.EditorRequested())


def _size(count: int) -> str:
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / (1024 * 1024):.1f} MB"
