"""Markdown shown as a column of segments, so long text stays cheap to stream and lay out.

Textual re-lays out every widget of a Markdown document whenever its last
block grows, and each layout pass walks every widget on the screen. A long
reply is therefore cut (see ``_markdown_split``) into segments of a few
thousand characters: the live segment is streamed through
``Markdown.get_stream``; finished ("frozen") segments get one update of their
full text, and those far from the viewport hide their blocks behind a fixed
height so layout passes skip them.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

from tui.widgets._markdown_split import Cut, MarkdownSplitter, split_markdown
from tui.widgets._text import clean
from tui.widgets._textual_private import set_markdown_source


class MarkdownSegment(Markdown):
    """One segment of a reply's Markdown."""

    DEFAULT_CSS = """
    MarkdownSegment {
        padding: 0;
    }
    """

    def __init__(self, markdown: str | None = None, *, classes: str | None = None) -> None:
        super().__init__(markdown, classes=classes)
        self._hidden_width: int | None = None

    @property
    def is_hidden(self) -> bool:
        """Are the blocks hidden behind a fixed height?"""
        return self._hidden_width is not None

    def set_hidden(self, hidden: bool) -> None:
        """Hide the blocks behind a fixed height (same height: nothing moves), or show them."""
        if hidden == self.is_hidden:
            return
        # Inline styles, not a CSS class: a class change would restyle every block.
        if hidden:
            height = self.outer_size.height
            if not height:
                return
            self._hidden_width = self.size.width
            self.styles.height = height
            for child in self.children:
                child.display = False
        else:
            self._hidden_width = None
            for child in self.children:
                child.display = True
            self.styles.height = None

    @property
    def hidden_stale(self) -> bool:
        """Hidden at a different width (the fixed height may be wrong now)."""
        return self._hidden_width is not None and self._hidden_width != self.size.width


class SegmentedMarkdown(Widget):
    """Markdown text as segments; static (from a saved message) or streamed (:meth:`write`)."""

    DEFAULT_CSS = """
    SegmentedMarkdown {
        height: auto;
    }
    """

    def __init__(
        self,
        text: str = "",
        *,
        live: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """
        Args:
            text: Markdown source (untrusted: cleaned here).
            live: Text will be streamed in with :meth:`write`.
        """
        super().__init__(id=id, classes=classes)
        text = clean(text)
        self._initial = split_markdown(text) if text else []
        self._splitter: MarkdownSplitter | None = MarkdownSplitter() if live else None
        self._frozen: list[tuple[MarkdownSegment, str]] = []
        self._live: MarkdownSegment | None = None
        self._live_text = ""
        self._stream: MarkdownStream | None = None

    def compose(self) -> ComposeResult:
        for text in self._initial:
            segment = MarkdownSegment(text)
            self._frozen.append((segment, text))
            yield segment

    @property
    def source(self) -> str:
        """The Markdown source shown (cleaned)."""
        return "".join(text for _, text in self._frozen) + self._live_text

    @property
    def segments(self) -> list[MarkdownSegment]:
        """The segment widgets, top to bottom."""
        found = [segment for segment, _ in self._frozen]
        if self._live is not None:
            found.append(self._live)
        return found

    # --- streaming ---------------------------------------------------------

    async def write(self, text: str) -> None:
        """Append streamed Markdown (already cleaned by the caller)."""
        if self._splitter is None:
            self._splitter = MarkdownSplitter()
        for operation in self._splitter.feed(text):
            if isinstance(operation, Cut):
                await self._freeze(operation.finished, operation.carried)
                if operation.carried:
                    await self._write_live(operation.carried)
            else:
                await self._write_live(operation)

    async def _write_live(self, text: str) -> None:
        if self._live is None:
            self._live = MarkdownSegment()
            self._live_text = ""
            await self.mount(self._live)
            self._stream = Markdown.get_stream(self._live)
        assert self._stream is not None
        self._live_text += text
        await self._stream.write(text)

    async def _freeze(self, finished: str, carried: str = "") -> None:
        """End the live segment so that it shows exactly ``finished``.

        The segment already shows ``finished + carried`` (appended through the
        stream). ``carried`` starts a top-level paragraph, so dropping the blocks
        parsed from it leaves what a full parse of ``finished`` gives, without
        re-mounting the whole segment; if those blocks cannot be told apart, the
        segment is updated with its full text.
        """
        live, stream = self._live, self._stream
        self._live, self._stream, self._live_text = None, None, ""
        if live is None:
            live = MarkdownSegment(finished)
            await self.mount(live)
        else:
            if stream is not None:
                await stream.stop()
            if carried:
                await _drop_blocks_from(live, finished)
        self._frozen.append((live, finished))

    async def finish(self, text: str) -> None:
        """Show the final ``text`` (the saved message's): one update per segment.

        The frozen segments already show their part of it; if the final text
        does not start with them (it differs from what was streamed), everything
        is rebuilt from it.
        """
        text = clean(text)
        self._splitter = None
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        frozen = "".join(part for _, part in self._frozen)
        if not text.startswith(frozen):
            await self.remove_children()
            self._frozen, self._live, self._live_text = [], None, ""
            frozen = ""
        rest = split_markdown(text[len(frozen) :]) if len(text) > len(frozen) else []
        live, self._live, self._live_text = self._live, None, ""
        if live is not None:
            first = rest.pop(0) if rest else ""
            await live.update(first)
            self._frozen.append((live, first))
        new = [MarkdownSegment(part) for part in rest]
        self._frozen.extend(zip(new, rest, strict=False))
        if new:
            await self.mount_all(new)

    # --- keeping layout cheap -----------------------------------------------

    def update_visibility(self, top: int, bottom: int) -> None:
        """Hide frozen segments entirely outside screen rows ``top``..``bottom``; show the rest."""
        if len(self._frozen) < 2:
            return
        for segment, _ in self._frozen:
            if not segment.is_mounted:
                continue
            region = segment.region
            near = region.bottom >= top and region.y <= bottom
            if segment.hidden_stale:
                segment.set_hidden(False)
            else:
                segment.set_hidden(not near)

    def show_all(self) -> None:
        """Show every segment's blocks (e.g. after the width changed)."""
        for segment, _ in self._frozen:
            segment.set_hidden(False)


async def _drop_blocks_from(segment: Markdown, finished: str) -> None:
    """Make ``segment`` show ``finished``: drop the blocks parsed from lines after it."""
    first_dropped_line = finished.count("\n")
    blocks = [child for child in segment.children if isinstance(child, MarkdownBlock)]
    doomed = [block for block in blocks if block.source_range[0] >= first_dropped_line]
    kept = blocks[: len(blocks) - len(doomed)]
    if (
        doomed
        and blocks[len(kept) :] == doomed
        and all(block.source_range[1] <= first_dropped_line for block in kept)
    ):
        await segment.remove_children(doomed)
        set_markdown_source(segment, finished)
    else:
        await segment.update(finished)
