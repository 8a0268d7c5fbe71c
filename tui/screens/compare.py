"""The compare screen: 2-4 alternatives side by side, keep the best.

Each column has a header (``model · tokens · cost · seconds``, from
:class:`core.branching.comparison.ColumnStats`) and the text of its alternative, which
scrolls on its own. ``d`` highlights the words where the texts differ
(:func:`core.branching.word_diff.word_diff`, computed in a thread); Enter keeps the
focused column (the screen dismisses with a :class:`Kept`, and the chat moves
the position there, as ◀ ▶ does); ``l`` labels it.

It opens on saved alternatives (:meth:`CompareScreen.__init__` with a
:class:`~core.branching.comparison.Comparison`) or live, during a fan-out
(:meth:`CompareScreen.live`): the columns fill from the fan-out's events
(:meth:`feed`) and Esc stops every stream before it closes the screen.

Texts are shown as plain ``Text`` (the Markdown source, as the diff sees it),
sanitised, never parsed as markup. A long text is cut at line ends into
pieces of about :data:`PIECE_CHARS` characters, one ``Static`` each, so a
streamed delta re-wraps only the last piece.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from core.branching.comparison import ColumnStats, Comparison, column_stats, column_text
from core.branching.word_diff import Span, word_diff
from core.chat.events import ColumnEvent, ColumnFinished, ColumnWaiting, Event
from core.providers.base import TextDelta, ThinkingDelta
from core.sanitize import strip_control
from tui import keymap

PIECE_CHARS = 2000
FIRST_PIECES = 2
"""Pieces of a saved text laid out before the screen's first frame (more than
a screenful); the rest is laid out just after it."""
FLUSH_SECONDS = 0.1
"""How often streamed text reaches the columns."""


@dataclass(frozen=True)
class Kept:
    """The column the user kept: move the position to ``leaf_id``."""

    entry_id: str
    leaf_id: str


def pieces(text: Text, size: int = PIECE_CHARS) -> list[Text]:
    """``text`` cut at line ends into pieces of at least ``size`` characters
    (the newline at a cut is dropped: each piece is its own block of lines)."""
    plain = text.plain
    found: list[Text] = []
    start = 0
    while len(plain) - start > size:
        cut = plain.find("\n", start + size)
        if cut < 0:
            break
        found.append(text[start:cut])
        start = cut + 1
    found.append(text[start:])
    return found


class CompareColumn(Vertical):
    """One alternative: a fixed header and a body that scrolls on its own."""

    def __init__(self, title: str, *, index: int) -> None:
        super().__init__(classes="compare-column")
        self.index = index
        self.title = title
        self.entry_id: str | None = None
        self.leaf_id: str | None = None
        self.stats: ColumnStats | None = None
        self.label: str | None = None
        self.text = ""
        """What is shown (sanitised)."""
        self.error: str | None = None
        self.shown = Text()
        """What the body shows once the column is finished (styled where highlighted)."""
        self.live = False
        self._frozen = 0
        """Characters of :attr:`text` in finished pieces (while streaming)."""
        self._pending: list[str] = []
        self._thinking = False
        self._painting = asyncio.Lock()
        """One change of the pieces at a time (a flush, the finished text, the diff)."""

    def compose(self) -> ComposeResult:
        yield Static(classes="compare-header")
        yield Static(classes="compare-figures")
        yield VerticalScroll(Static(classes="compare-piece"), classes="compare-body")

    def on_mount(self) -> None:
        self.show_header()

    @property
    def body(self) -> VerticalScroll:
        return self.query_one(".compare-body", VerticalScroll)

    def show_header(self, note: str | None = None) -> None:
        """The model (and label) on the first line; tokens · cost · seconds, or
        what is happening, under it (on two lines when the column is narrow)."""
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(strip_control(self.stats.title if self.stats else self.title), "bold")
        if self.label:
            header.append(f"  [{strip_control(self.label)}]", "bold yellow")
        figures = Text()  # wraps in a narrow column: every figure stays readable
        if self.stats is not None:
            figures.append(self.stats.figures)
        if note:
            figures.append(f" · {note}" if self.stats else note, "italic")
        self.query_one(".compare-header", Static).update(header)
        self.query_one(".compare-figures", Static).update(figures)

    # --- whole texts ------------------------------------------------------

    async def show(self, spans: Sequence[Span] | None = None, *, first: bool = False) -> None:
        """Show :attr:`text` (with ``spans``: the same text, differences
        highlighted); ``first``: only its first :data:`FIRST_PIECES` pieces."""
        async with self._painting:
            await self._show(spans, first)

    async def _show(self, spans: Sequence[Span] | None, first: bool = False) -> None:
        text = Text(self.text) if spans is None else _highlighted(spans)
        if self.error:
            text.append(f"\n\n⚠ {strip_control(self.error)}", "bold red")
        self.shown = text
        body = self.body
        parts = pieces(text)[:FIRST_PIECES] if first else pieces(text)
        statics = list(body.query(".compare-piece").results(Static))
        for static, part in zip(statics, parts, strict=False):
            static.update(part)
        if len(statics) > len(parts):
            await body.remove_children(statics[len(parts) :])
        elif len(parts) > len(statics):
            await body.mount_all(Static(p, classes="compare-piece") for p in parts[len(statics) :])

    # --- streaming ----------------------------------------------------------

    def add(self, delta: str) -> None:
        self._pending.append(strip_control(delta))

    def thinking(self) -> None:
        """A thinking delta arrived: say so until the text starts."""
        if not self._thinking and not self.text and not self._pending:
            self._thinking = True
            self.show_header("thinking…")

    async def flush(self) -> None:
        """Bring the streamed text on screen: only the last piece re-wraps."""
        if not self._pending or not self.live:
            return
        async with self._painting:
            await self._flush()

    async def _flush(self) -> None:
        self.text += "".join(self._pending)
        self._pending.clear()
        body = self.body
        follow = body.scroll_y >= body.max_scroll_y  # at the end: stay there
        live = body.query(".compare-piece").last(Static)
        tail = self.text[self._frozen :]
        while len(tail) > PIECE_CHARS and (cut := tail.find("\n", PIECE_CHARS)) >= 0:
            live.update(Text(tail[:cut]))
            live = Static(classes="compare-piece")
            await body.mount(live)
            self._frozen += cut + 1
            tail = self.text[self._frozen :]
        live.update(Text(tail))
        self.show_header(f"{len(self.text):,} characters…")
        if follow:
            body.scroll_end(animate=False)


def _highlighted(spans: Sequence[Span]) -> Text:
    text = Text()
    for span in spans:
        text.append(span.text, "reverse bold" if span.changed else "")
    return text


class CompareScreen(Screen["Kept | None"]):
    """Dismisses with :class:`Kept` (Enter on a column) or None (Esc)."""

    CSS_PATH = "compare.tcss"
    BINDINGS = keymap.bindings("compare")

    def __init__(
        self,
        comparison: Comparison | None = None,
        *,
        titles: Sequence[str] = (),
        on_label: Callable[[str, str | None], None] | None = None,
        on_stop: Callable[[], None] | None = None,
        labels: dict[str, str] | None = None,
        question: str = "",
    ) -> None:
        """Saved alternatives (``comparison``), or live columns named ``titles``
        (use :meth:`live`). ``on_label(entry_id, label)`` saves a label;
        ``on_stop()`` stops the fan-out; ``question`` is what they answer."""
        super().__init__()
        self.question = question
        self.comparison = comparison
        self.on_label = on_label
        self.on_stop = on_stop
        labels = labels or {}
        if comparison is not None:
            self.columns = [
                CompareColumn(c.stats.title, index=i) for i, c in enumerate(comparison.columns)
            ]
            for widget, column in zip(self.columns, comparison.columns, strict=True):
                widget.entry_id, widget.leaf_id = column.entry_id, column.leaf_id
                widget.stats, widget.text = column.stats, strip_control(column.text)
                widget.error = column.stats.error
                widget.label = labels.get(column.entry_id)
        else:
            self.columns = [CompareColumn(t, index=i) for i, t in enumerate(titles)]
            for widget in self.columns:
                widget.live = True
        self.diff = False
        self._current = comparison.current if comparison is not None else 0
        """The column keys act on: where Tab moved, or what the user focused."""
        self._spans: list[list[Span]] | None = None
        self._flusher: Timer | None = None

    @classmethod
    def live(
        cls,
        models: Sequence[str],
        *,
        on_stop: Callable[[], None],
        on_label: Callable[[str, str | None], None] | None = None,
        question: str = "",
    ) -> CompareScreen:
        return cls(titles=models, on_stop=on_stop, on_label=on_label, question=question)

    def compose(self) -> ComposeResult:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("Compare · ", "bold")
        title.append(" ".join(strip_control(self.question).split()))
        yield Static(title, id="compare-question")
        with Horizontal(id="compare-columns"):
            yield from self.columns
        yield Static(id="compare-hint")

    async def on_mount(self) -> None:
        for column in self.columns:
            if not column.live:
                await column.show(first=True)
        if not self.streaming:
            self.call_after_refresh(self._show_rest)
        self._show_hint()
        self.columns[self._current].body.focus()
        if self.streaming:
            self._flusher = self.set_interval(FLUSH_SECONDS, self._flush)

    @property
    def streaming(self) -> bool:
        return any(c.live for c in self.columns)

    @property
    def focused_column(self) -> CompareColumn:
        """The column Tab last moved to or the user last focused: Tab sets it at
        once, so an Enter typed right after it acts on that column even before
        the focus has moved."""
        return self.columns[self._current]

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        for column in self.columns:
            if event.widget is column.body:
                self._current = column.index

    def _show_hint(self) -> None:
        def key(action: str) -> str:
            return keymap.key_in(self, action)

        diff = "plain" if self.diff else "differences"
        self.query_one("#compare-hint", Static).update(
            Text(
                f"{key('compare_keep')} keep this one · {key('compare_diff')} {diff} · "
                f"{key('compare_label')} label · {key('compare_next')} next column · "
                f"{key('compare_close')} {'stop' if self.streaming else 'close'}",
                no_wrap=True,
                overflow="ellipsis",
            )
        )

    # --- live ------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        """A conversation event: the fan-out's column events fill the columns
        (call on the app's thread)."""
        if not isinstance(event, (ColumnEvent, ColumnWaiting, ColumnFinished)):
            return
        if event.column >= len(self.columns):
            return
        column = self.columns[event.column]
        if isinstance(event, ColumnEvent) and isinstance(event.event, TextDelta):
            column.add(event.event.text)
        elif isinstance(event, ColumnEvent) and isinstance(event.event, ThinkingDelta):
            column.thinking()
        elif isinstance(event, ColumnWaiting):
            column.show_header(f"retrying in {event.seconds:.0f} s")
        elif isinstance(event, ColumnFinished):
            column.live = False  # at once: no flush after this, and end_streams leaves it
            self.run_worker(self._finish(column, event), group="compare-finish")

    async def _finish(self, column: CompareColumn, event: ColumnFinished) -> None:
        result = event.result
        column._pending.clear()
        reply = result.reply
        column.entry_id = reply.id if reply is not None else None
        column.leaf_id = reply.id if reply is not None else None
        column.stats = column_stats(result.entries, result.thinking)
        column.text = strip_control(column_text(result.entries))
        column.error = result.error
        column.show_header()
        await column.show()
        if not self.streaming and self._flusher is not None:
            self._flusher.stop()
            self._show_hint()

    def end_streams(self) -> None:
        """The fan-out is over: a column that never heard its end (the fan-out
        failed) stops streaming, so Esc closes the screen."""
        for column in self.columns:
            if column.live:
                column.live = False
                column.error = column.error or "the reply did not finish"
                column.show_header()
                self.run_worker(column.show(), group="compare-finish")
        if self._flusher is not None:
            self._flusher.stop()
        if self.is_attached:
            self._show_hint()

    async def _flush(self) -> None:
        with self.app.batch_update():  # the columns change in one frame
            for column in self.columns:
                if column.live:
                    await column.flush()

    # --- actions ------------------------------------------------------------------

    def action_close(self) -> None:
        if self.streaming and self.on_stop is not None:
            self.on_stop()
            return
        self.dismiss(None)

    def action_keep(self) -> None:
        column = self.focused_column
        if self.streaming:
            self.notify(
                "The replies are still streaming: wait, or press"
                f" {keymap.key_in(self, 'compare_close')} to stop them."
            )
            return
        if column.leaf_id is None or column.entry_id is None:
            self.notify("Nothing was saved in this column.", severity="warning")
            return
        self.dismiss(Kept(column.entry_id, column.leaf_id))

    def action_toggle_diff(self) -> None:
        if self.streaming:
            self.notify("Differences show once every reply has finished.")
            return
        self.diff = not self.diff
        self._show_hint()
        if self.diff:
            self._show_diff()
        else:
            self.run_worker(self._show_plain(), group="compare-diff", exclusive=True)

    @work(thread=True, exclusive=True, group="compare-diff-compute", exit_on_error=False)
    def _show_diff(self) -> None:
        if self._spans is None:
            self._spans = word_diff([c.text for c in self.columns])
        # mypy cannot solve Textual's ``T | Awaitable[T]`` for a coroutine function.
        self.app.call_from_thread(self._paint_diff)  # type: ignore[arg-type]

    async def _paint_diff(self) -> None:
        if not self.diff or self._spans is None:
            return
        for column, spans in zip(self.columns, self._spans, strict=True):
            await column.show(spans)

    def _show_rest(self) -> None:
        """The whole texts, after the first frame (unless the diff shows them already)."""
        if not self.diff:
            self.run_worker(self._show_plain(), group="compare-diff", exclusive=True)

    async def _show_plain(self) -> None:
        for column in self.columns:
            await column.show()

    def action_label(self) -> None:
        from tui.screens.dialogs import TextPrompt

        column = self.focused_column
        if column.entry_id is None or self.on_label is None:
            self.notify("Nothing to label in this column yet.", severity="warning")
            return
        entry_id = column.entry_id

        def labelled(label: str | None) -> None:
            if label is None or self.on_label is None:
                return
            label = " ".join(strip_control(label).split()) or None
            self.on_label(entry_id, label)
            column.label = label
            column.show_header()

        self.app.push_screen(
            TextPrompt("Label this alternative", column.label or "", placeholder="a short name"),
            labelled,
        )

    def action_column(self, step: int) -> None:
        self._current = (self._current + step) % len(self.columns)
        self.columns[self._current].body.focus()
