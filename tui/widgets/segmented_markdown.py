"""Markdown shown as a column of segments, so long text stays cheap to stream and lay out.

Textual re-lays out every widget of a Markdown document whenever its last
block grows, and each layout pass walks every widget on the screen. A long
reply is therefore cut (see ``_markdown_split``) into segments of a few
thousand characters: the live segment is streamed through
``Markdown.get_stream``; finished ("frozen") segments get one update of their
full text and measure their height once per width, and those far from the
viewport hide their blocks behind a fixed height so layout passes skip them.
A segment that would scroll out of view before it is seen (the reply is far
ahead of the screen) is mounted lazily, without blocks, and made when it comes
near or once the reply is complete: the work of a frame follows what is seen,
not how fast the text arrives.

A text of one short paragraph has no segment at all: the widget paints it
itself, as a segment's paragraph block would show it (a segment and its block
are two more widgets in every layout pass). A reply that is nothing else has
no text part either: its row paints the paragraph (``AssistantMessage``), and
makes a text part of it, which paints the same, when more comes.
"""

from __future__ import annotations

import asyncio
import re
from typing import cast

from textual.app import ComposeResult, RenderResult
from textual.await_complete import AwaitComplete
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Size
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

from tui.internals.keys_first import ui_first
from tui.internals.textual_private import (
    append_markdown,
    layout_count,
    lone_paragraph,
    markdown_blocks,
    set_markdown_source,
)
from tui.widgets._markdown_split import (
    SEGMENT_CHARS,
    Cut,
    MarkdownSplitter,
    estimated_rows,
    split_markdown,
)
from tui.widgets._text import clean

SHOWN_TAIL_CHARS = 4_000
"""How much of a write's end is always rendered: about a screen of text. A
whole segment before it is mounted lazily (see :meth:`SegmentedMarkdown.write`)."""


_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:", re.MULTILINE)
"""A line defining a reference link, which changes how earlier blocks show."""

LAZY_SECONDS = 1 / 30
"""The pause between two lazy segments made in the background."""

LONE_CHARS = 2_000
"""The longest text of one paragraph that is painted without a segment (a
streamed one is parsed whole at every write until it is in segments)."""


class MarkdownSegment(Markdown):
    """One segment of a reply's Markdown."""

    DEFAULT_CSS = """
    MarkdownSegment {
        padding: 0;
    }
    """

    def __init__(
        self,
        markdown: str | None = None,
        *,
        streaming: bool = False,
        lazy: bool = False,
        streamed: bool = False,
        classes: str | None = None,
    ) -> None:
        """
        Args:
            streaming: Text will be appended (``Markdown.get_stream``) until :meth:`settle`.
            lazy: Parse and mount the blocks only when :meth:`materialize` is called;
                until then the segment is blank, about as tall as its text.
            streamed: Part of a reply streaming in: its blocks are made once a key
                on its way to the screen is painted.
        """
        super().__init__(None if lazy else markdown, classes=classes)
        self._streamed = streamed
        self._lazy_text = markdown or "" if lazy else None
        self.is_materializing = False
        """Blocks of a lazy segment being made (:meth:`materialize`)."""
        self._estimated_width: int | None = None
        self._hidden_width: int | None = None
        self._streaming = streaming
        self._settled = False
        self._height_at: tuple[int, int, int] | None = None
        """(width, layout count, content height) of a settled segment, once
        measured: a block that mounts or grows after the measure makes it
        stale (:func:`layout_count`)."""

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        event.stop()  # nothing above reads a segment's headings: four hops per update

    def settle(self) -> None:
        """The blocks will not change any more: measure the height once per width.

        Textual keys its arrangement cache on the container's whole size, and a
        streaming reply's container grows at every frame, so without this every
        layout pass re-measured every block of every finished segment: the
        layout cost grew with the reply."""
        self._streaming = False
        self._settled = True

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        known = self._height_at
        if known is not None and known[:2] == (width, layout_count(self)):
            return known[2]
        height = super().get_content_height(container, viewport, width)
        if self._settled:
            self._height_at = (width, layout_count(self), height)
        return height

    def update(self, markdown: str, *, keep_same: bool = False) -> AwaitComplete:
        """Show ``markdown`` (the whole segment's text): settled once its blocks
        are in, unless it is still streaming. ``keep_same``: the blocks on screen
        were streamed from this text, and stay if a parse of the whole text makes
        the same ones (no remount, no layout pass)."""
        self._settled, self._height_at = False, None
        updated = AwaitComplete(self._show_blocks(markdown, keep_same=keep_same))

        async def settle_when_updated() -> None:
            await updated
            if not self._streaming:
                self.settle()

        return AwaitComplete(settle_when_updated())

    def append(self, markdown: str) -> AwaitComplete:
        """Streamed text, its blocks made once a key on its way to the screen is
        painted: see :func:`append_markdown` (no batch held while blocks mount)."""
        return append_markdown(self, markdown, first=ui_first.render_turn)

    async def _show_blocks(self, markdown: str, *, keep_same: bool = False) -> None:
        """Make the blocks of ``markdown``, with the segment's lock held (an
        append under way comes first). Blocks already there are replaced in one
        batch, as Textual's ``update`` replaces them (no frame without blocks);
        a segment's first blocks are mounted outside a batch: Textual's ``update``
        holds ``App.batch_update`` while they mount, which takes the loop turns of
        every other task (a stream's reader, other segments), and no screen
        update, a key's echo included, is painted meanwhile. A streamed segment
        waits for a key on its way to the screen to be painted; no other does: a
        key's own handler may be what mounts it (a branch switch)."""
        async with self.lock:
            if self._streamed:
                await ui_first.render_turn()
            blocks = await markdown_blocks(self, markdown)
            made = [child for child in self.children if isinstance(child, MarkdownBlock)]
            if keep_same and _same_blocks(made, blocks, markdown):
                return
            set_markdown_source(self, markdown)
            if made:
                with self.app.batch_update():
                    await self.remove_children(made)
                    await self.mount_all(blocks)
            elif blocks:
                await self.mount_all(blocks)

    @property
    def source(self) -> str:
        """The segment's Markdown text (made into blocks or not)."""
        return self._lazy_text if self._lazy_text is not None else super().source

    @property
    def is_shown(self) -> bool:
        """Are its blocks in (a streaming segment's: any of them)?"""
        return self._settled or (self._streaming and bool(self.children))

    @property
    def is_lazy(self) -> bool:
        """Are the blocks still to be made (:meth:`materialize`)?"""
        return self._lazy_text is not None

    def estimate_height(self, width: int) -> None:
        """Be as tall as the lazy text probably is at ``width`` columns."""
        if self._lazy_text is not None and width > 0 and width != self._estimated_width:
            self._estimated_width = width
            self.styles.height = estimated_rows(self._lazy_text, width)

    def materialize(self) -> AwaitComplete:
        """Parse and mount the blocks of a lazy segment. It keeps its estimated
        height until they are all in, then takes theirs: one change, not a
        segment that shrinks to nothing and grows back over a few frames."""
        text, self._lazy_text = self._lazy_text, None
        if text is None:
            return AwaitComplete.nothing()
        self.is_materializing = True
        updated = self.update(text)

        async def take_their_height() -> None:
            await updated
            self._estimated_width = None
            self.styles.height = None
            self.is_materializing = False

        return AwaitComplete(take_their_height())

    @property
    def is_hidden(self) -> bool:
        """Are the blocks hidden behind a fixed height?"""
        return self._hidden_width is not None

    def set_hidden(self, hidden: bool) -> None:
        """Hide the blocks behind a fixed height (same height: nothing moves), or show them."""
        if hidden == self.is_hidden or self.is_lazy:
            return
        # Inline styles, not a CSS class: a class change would restyle every block.
        if hidden:
            height = self.region.height  # the last pass's (``outer_size`` can be a pass older)
            if not height or not self._laid_out_as_measured():
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

    def _laid_out_as_measured(self) -> bool:
        """Is it as tall on screen as its blocks measure now? Not if a block
        changed since its last layout pass (the pass is behind): it would be
        hidden at a wrong height, kept until it is shown again."""
        size = self.size
        return self._height_at == (size.width, layout_count(self), size.height)

    @property
    def hidden_stale(self) -> bool:
        """Hidden at a different width (the fixed height may be wrong now)."""
        return self._hidden_width is not None and self._hidden_width != self.size.width


INLINE_CLASSES = {"em", "strong", "s", "code_inline"}
"""The component classes a painted paragraph's inline styles name (``Markdown``'s)."""

INLINE_STYLES = """
    &:ansi > .code_inline {
        background: ansi_default !important;
    }
    &:dark > .code_inline {
        background: $warning 10%;
        color: $text-warning 95%;
    }
    &:light > .code_inline {
        background: $error 5%;
        color: $text-error 95%;
    }
    & > .em {
        text-style: italic;
    }
    & > .strong {
        text-style: bold;
    }
    & > .s {
        text-style: strike;
    }
"""
"""Those classes' styles, as ``Markdown`` gives them to its blocks: nested in
the rules of a widget that paints a paragraph."""


class SegmentedMarkdown(Widget):
    """Markdown text as segments; static (from a saved message) or streamed (:meth:`write`).

    A text that is one paragraph of at most :data:`LONE_CHARS` is painted by
    this widget as a segment shows its paragraph: the colour and the inline
    component classes below are ``Markdown``'s, and a blank line stands for
    the paragraph's bottom margin (no class to add: that would restyle). A
    streamed text that becomes more is moved into a live segment, and the
    painted paragraph stays until the segment's blocks are in: no frame shows
    the text gone."""

    COMPONENT_CLASSES = INLINE_CLASSES

    DEFAULT_CSS = (
        """
    SegmentedMarkdown {
        height: auto;
        color: $foreground;
    """
        + INLINE_STYLES
        + "}"
    )

    class AllMade(Message):
        """Every lazy segment has its blocks now: far ones can be hidden."""

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
        lone = paragraph_to_paint(text)
        self._lone = lone
        """The paragraph painted by this widget, if it paints one."""
        self._lone_shown = with_margin(lone)
        self._lone_text: str | None = text if lone is not None or (live and not text) else None
        """The text while it can be painted whole (None once it is in segments)."""
        self._initial = split_markdown(text) if text and self._lone_text is None else []
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
        if self._lone_text is not None:
            return self._lone_text
        return "".join(text for _, text in self._frozen) + self._live_text

    @property
    def segments(self) -> list[MarkdownSegment]:
        """The segment widgets, top to bottom."""
        found = [segment for segment, _ in self._frozen]
        if self._live is not None:
            found.append(self._live)
        return found

    # --- a lone paragraph ----------------------------------------------------

    @property
    def paragraph(self) -> Content | None:
        """The paragraph this widget paints (None: segments show the text)."""
        return self._lone

    def render(self) -> RenderResult:
        shown = self._lone_shown
        return shown if shown is not None else super().render()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        shown = self._lone_shown
        if shown is not None and self.children:
            # Segments being made: the painted paragraph is shown until they are.
            # Textual reads the styles as a RulesMap here too (Widget.get_content_height).
            return shown.get_height(cast(RulesMap, self.styles), width)
        return super().get_content_height(container, viewport, width)

    def _painted_if_lone(self, text: str) -> bool:
        """Paint ``text`` if it is one short paragraph; else (False) it is for
        segments to show, from now on."""
        lone = paragraph_to_paint(text)
        self._lone_text = text if lone is not None else None
        if lone is not None:
            self._paint(lone)
        return lone is not None

    def _paint(self, lone: Content | None) -> None:
        """Paint ``lone`` (None: no more, segments show the text)."""
        if lone == self._lone:
            return
        self._lone, self._lone_shown = lone, with_margin(lone)
        self.clear_cached_dimensions()
        self.refresh(layout=True)

    async def _stream_from(self, text: str) -> None:
        """Go on streaming in a live segment that starts with ``text`` (shorter
        than a segment: no cut), its blocks made before the painting stops."""
        if self._splitter is None:
            self._splitter = MarkdownSplitter()
        self._splitter.feed(text)
        live = self._live = MarkdownSegment(streaming=True)
        self._live_text = text
        await self.mount(live)
        await live.append(text)
        self._stream = Markdown.get_stream(live)
        self._paint(None)

    async def _show_in_segments(self, text: str) -> None:
        """Show ``text`` in finished segments, their blocks made before the painting stops."""
        parts = split_markdown(text)
        segments = [MarkdownSegment() for _ in parts]
        self._frozen = list(zip(segments, parts, strict=True))
        await self.mount_all(segments)
        await asyncio.gather(*(segment.update(part) for segment, part in self._frozen))
        self._paint(None)

    def action_link(self, href: str) -> None:
        """A link of the painted paragraph was clicked: opened, as a segment opens one."""
        self.app.open_url(href)

    @property
    def shows_its_text(self) -> bool:
        """Is its text on screen: painted, or in the blocks of every segment
        near enough to have them?"""
        return self._lone is not None or all(
            segment.is_lazy or segment.is_shown for segment in self.segments
        )

    @property
    def all_made(self) -> bool:
        """Has every segment its blocks (none lazy, none being made)?"""
        return not any(segment.is_lazy or segment.is_materializing for segment, _ in self._frozen)

    # --- streaming ---------------------------------------------------------

    async def write(self, text: str) -> None:
        """Append streamed Markdown (already cleaned by the caller).

        A whole segment that arrives with more than :data:`SHOWN_TAIL_CHARS`
        after it would scroll out of view before it is ever seen: it is mounted
        lazily (its blocks are made when it comes into view), so the work of a
        write is bounded by its tail, however far the reply is ahead."""
        if self._lone_text is not None:
            whole = self._lone_text + text
            if self._painted_if_lone(whole):
                return
            text = whole
            if self._lone is not None:
                await self._stream_from(whole[:SEGMENT_CHARS])
                text = whole[SEGMENT_CHARS:]
                if not text:
                    return
        if self._splitter is None:
            self._splitter = MarkdownSplitter()
        operations = self._splitter.feed(text)
        wholes: list[MarkdownSegment] = []
        index = 0
        while index < len(operations):
            operation = operations[index]
            following = operations[index + 1] if index + 1 < len(operations) else None
            index += 1
            if (
                isinstance(operation, str)
                and isinstance(following, Cut)
                and self._live is None
                and not following.carried
            ):
                # A whole segment at once: made from its text, parsed once; the
                # whole segments in a row are mounted together (one layout).
                index += 1
                tail = sum(len(op) for op in operations[index:] if isinstance(op, str))
                wholes.append(self._whole(following.finished, lazy=tail > SHOWN_TAIL_CHARS))
                continue
            await self._mount_all(wholes)
            if isinstance(operation, Cut):
                await self._freeze(operation.finished, operation.carried)
                if operation.carried:
                    await self._write_live(operation.carried)
            else:
                await self._write_live(operation)
        await self._mount_all(wholes)

    def _whole(self, text: str, *, lazy: bool) -> MarkdownSegment:
        """A finished segment, in :attr:`_frozen` (to be mounted by the caller)."""
        segment = MarkdownSegment(text, lazy=lazy, streamed=True)
        if lazy:
            segment.estimate_height(self.size.width or self.app.size.width)
        self._frozen.append((segment, text))
        return segment

    async def _mount_all(self, segments: list[MarkdownSegment]) -> None:
        """Mount (and forget) ``segments``, once a key on its way to the screen is painted."""
        if segments:
            await ui_first.render_turn()
            await self.mount_all(segments)
            segments.clear()

    async def _write_live(self, text: str) -> None:
        if self._live is None:
            self._live = MarkdownSegment(streaming=True)
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
            await self._mount_all([self._whole(finished, lazy=False)])
            return
        if stream is not None:
            await stream.stop()
        if carried:
            await _drop_blocks_from(live, finished)
        live.settle()
        self._frozen.append((live, finished))

    async def finish(self, text: str) -> None:
        """Show the final ``text`` (the saved message's): one update per segment.

        The frozen segments already show their part of it; if the final text
        does not start with them (it differs from what was streamed), everything
        is rebuilt from it.
        """
        text = clean(text)
        self._splitter = None
        if self._lone_text is not None:
            if self._painted_if_lone(text):
                return
            if self._lone is not None:
                await self._show_in_segments(text)
                return
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        frozen = "".join(part for _, part in self._frozen)
        if not text.startswith(frozen):
            await self.remove_children()
            self._frozen, self._live, self._live_text = [], None, ""
            frozen = ""
        rest = split_markdown(text[len(frozen) :]) if len(text) > len(frozen) else []
        live, streamed = self._live, self._live_text
        self._live, self._live_text = None, ""
        if live is not None:
            first = rest.pop(0) if rest else ""
            live.settle()
            await live.update(first, keep_same=first == streamed)
            self._frozen.append((live, first))
        new = [MarkdownSegment(part) for part in rest]
        self._frozen.extend(zip(new, rest, strict=False))
        if new:
            await self.mount_all(new)
        if any(segment.is_lazy for segment, _ in self._frozen):
            self.run_worker(self._make_lazy_blocks(), group="lazy-segments", exclusive=True)

    async def _make_lazy_blocks(self) -> None:
        """Once the reply is complete: make the lazy segments' blocks in the
        background, nearest the end first, one per frame, so that scrolling up
        finds them made."""
        for segment, _ in reversed(self._frozen):
            if segment.is_lazy and segment.is_attached:
                await ui_first.render_turn()  # a key on its way to the screen is painted first
                await segment.materialize()
                await asyncio.sleep(LAZY_SECONDS)
        self.post_message(self.AllMade())

    # --- keeping layout cheap -----------------------------------------------

    def update_visibility(self, top: int, bottom: int) -> None:
        """Segments entirely outside screen rows ``top``..``bottom`` hide their
        blocks; the others show them. Lazy segments make their blocks from
        further away (as far again on each side): making them takes a few
        frames, and a page key must not find them blank. Not while text is
        streamed in: the reply's end moves on at every render, and making every
        segment it passes would be the work lazy segments exist to avoid (they
        are all made once it is complete)."""
        if len(self._frozen) < 2:
            return
        reach = 0 if self._splitter is not None else bottom - top
        # While a lazy segment's blocks are being made its height changes, and
        # the regions read here can be a pass behind: hiding waits until it is
        # made. Lazy segments waiting to be made keep their estimated height.
        hiding = not any(segment.is_materializing for segment, _ in self._frozen)
        for segment, _ in self._frozen:
            width = segment.size.width
            if not segment.is_mounted or not width:
                continue  # not laid out yet: where it is is not known
            region = segment.region
            near = region.bottom >= top and region.y <= bottom
            if segment.is_lazy:
                if region.bottom >= top - reach and region.y <= bottom + reach:
                    segment.materialize()
                else:
                    segment.estimate_height(width)
            elif segment.hidden_stale or not hiding:
                segment.set_hidden(False)
            else:
                segment.set_hidden(not near)


def paragraph_to_paint(text: str) -> Content | None:
    """The paragraph to paint for ``text`` (cleaned), when it is one short paragraph."""
    return lone_paragraph(text) if text and len(text) <= LONE_CHARS else None


def with_margin(paragraph: Content | None) -> Content | None:
    """The paragraph as painted: with the blank line of its block's bottom margin."""
    return paragraph + "\n" if paragraph is not None else None


def _same_blocks(made: list[MarkdownBlock], parsed: list[MarkdownBlock], source: str) -> bool:
    """Do blocks streamed from ``source`` show what ``parsed`` (from a parse of
    all of it) would? A block is made from its lines, so the same kinds over the
    same lines are the same blocks; except that a reference link shows by a
    definition that may come after it. Streaming parses again from the start of
    the last block, and a block that makes no widget (an HTML block) throws
    that count off: the kinds and lines then differ."""
    if _LINK_DEFINITION.search(source):
        return False
    return [(type(block), block.source_range) for block in made] == [
        (type(block), block.source_range) for block in parsed
    ]


async def _drop_blocks_from(segment: Markdown, finished: str) -> None:
    """Make ``segment`` show ``finished``: drop the blocks parsed from lines after
    it. With the segment's lock held: a stopped stream's last append may still
    be making its blocks (it goes on, shielded)."""
    async with segment.lock:
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
            return
    await segment.update(finished)  # takes the lock itself
