"""A saved assistant message: thinking, Markdown text, tool call cards, and how it ended."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast

from textual import events
from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.css.styles import RulesMap
from textual.geometry import Region, Size
from textual.layout import DockArrangeResult
from textual.message import Message as TextualMessage
from textual.style import Style
from textual.widget import AwaitMount, Widget
from textual.widgets import Static

from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.entries import Entry
from core.sessions.ids import short_id
from core.sessions.messages import Message, Usage
from core.tools.outcome import ToolOutcome
from tui.widgets._bounded import bounded_message
from tui.widgets._context import ViewContext
from tui.widgets._text import clean, human_count, one_line
from tui.widgets.image_view import ImageView
from tui.widgets.message_widget import MessageWidget
from tui.widgets.segmented_markdown import (
    INLINE_CLASSES,
    INLINE_STYLES,
    SegmentedMarkdown,
    paragraph_to_paint,
    with_margin,
)
from tui.widgets.thinking_block import ThinkingBlock
from tui.widgets.tool_call_card import ToolCallCard


def header_content(
    model: str,
    usage: str,
    agent: str | None,
    context: ViewContext,
    entry_id: str | None = None,
) -> Content:
    """``◆ model · usage · short id``, with the agent's name first in its colour
    when a round-table agent answers (a name from data: styled, never markup).
    The short id (dim) is the one ``--from`` and ``sessions`` take; a reply
    still streaming has none yet."""
    model = one_line(model, 80) or "assistant"
    short = (f" · {short_id(entry_id)}", "dim") if entry_id else ""
    if agent is None:
        return Content.assemble(("◆ ", "dim"), model, usage, short)
    color = context.agent_colors.get(agent.casefold())
    name = Content.styled(
        agent, Style(foreground=color, bold=True, dim=False) if color else "bold not dim"
    )
    return Content.assemble(("◆ ", "dim"), name, (" · ", "dim"), model, usage, short)


def usage_label(usage: Usage | None) -> str:
    """``1,234 tokens · $0.0123`` for a header; ``~1,234`` when counted here."""
    if usage is None:
        return ""
    label = f"{'~' if usage.estimated else ''}{human_count(usage.output_tokens)} tokens"
    if usage.cost > 0:
        label += f" · ${usage.cost:.4f}"
    return label


CONTEXT_HINT = "compact (/compact) or shorten the message"
"""What helps a context too long for the window: retrying it cannot."""


def hint_for(error_kind: object, retry_hint: str) -> str:
    """What to do about an error of ``error_kind``: retry, unless retrying cannot help."""
    return CONTEXT_HINT if error_kind == "context_overflow" else retry_hint


def status_of(message: Message, retry_hint: str) -> tuple[str, str] | None:
    """The line that says how a reply ended (and its CSS class), if it did not simply stop;
    an error names what can help (``retry_hint``, or compacting for a full window)."""
    reason = message.stop_reason
    if reason == "aborted":
        return "■ stopped", "-stopped"
    if reason == "interrupted":  # the error says why when it was not the connection
        why = one_line(message.error, 300) or "connection lost"
        return f"⚠ interrupted ({why})", "-interrupted"
    if reason == "error":
        error = one_line(message.error, 300) or "unknown error"
        return (
            f"✗ error: {error} · {hint_for(message.meta.get('error_kind'), retry_hint)}",
            "-error",
        )
    if reason == "length":  # the error, when there is one, says the window filled
        why = one_line(message.error, 300) or "cut off at the output token limit"
        return f"… {why}", "-length"
    return None


def content_runs(content: Iterable[object]) -> list[object]:
    """Content blocks with consecutive text blocks joined into one ``TextContent``."""
    runs: list[object] = []
    for block in content:
        if isinstance(block, TextContent) and runs and isinstance(runs[-1], TextContent):
            runs[-1] = TextContent(runs[-1].text + block.text)
        else:
            runs.append(block)
    return runs


def lone_paragraph_of(blocks: Iterable[object]) -> tuple[str, Content] | None:
    """The text (cleaned) and its paragraph, of content that is one short
    paragraph of text and nothing else (whitespace-only text counts as none)."""
    runs = [
        block
        for block in content_runs(blocks)
        if not (isinstance(block, TextContent) and not block.text.strip())
    ]
    if len(runs) != 1 or not isinstance(runs[0], TextContent):
        return None
    text = clean(runs[0].text)
    paragraph = paragraph_to_paint(text)
    return (text, paragraph) if paragraph is not None else None


@dataclass
class _BelowHeader(DockArrangeResult):
    """A row's children moved down below the header it paints itself: the
    area they take starts at the row's top, header included."""

    @property
    def total_region(self) -> Region:
        region = super().total_region
        return Region(region.x, 0, region.width, region.bottom)


class AssistantMessage(MessageWidget):
    """An assistant message from the session: parts in the order the model produced them.

    The header (``◆ model · tokens``) is painted by the row itself, on its first
    lines, its parts laid out below it: each widget a row has costs in every
    layout pass, and every exchange mounts one of these. Once a bar of
    alternatives comes (it goes above the header), the header is a child line
    of its own.

    A message that is one short paragraph of text and nothing else (most short
    replies) has no child at all: the row paints the paragraph under its
    header, as its text part would show it. Before any child comes (a part, a
    status line, a bar), the text part is made, and the row paints the
    paragraph until the part is laid out over it."""

    COMPONENT_CLASSES = {"message-header", *INLINE_CLASSES}

    DEFAULT_CSS = (
        """
    AssistantMessage {
        margin: 0;
        & > .message-header {
            color: $text-muted;
            text-style: dim;
        }
        & > .message-status {
            margin: 0 0 1 0;
            color: $text-muted;
            &.-error {
                color: $text-error;
            }
            &.-interrupted {
                color: $text-warning;
            }
        }
        & > .message-clipped {
            color: $text-muted;
            text-style: italic;
            margin: 0 0 1 0;
        }
        & > .message-waiting {
            color: $text-warning;
            margin: 0 0 1 0;
        }
    """
        + INLINE_STYLES
        + "}"
    )

    class RetryRequested(TextualMessage):
        """The user clicked the retry hint of a failed reply."""

        def __init__(self, entry_id: str | None) -> None:
            super().__init__()
            self.entry_id = entry_id

    def __init__(
        self,
        entry: Entry | None,
        context: ViewContext | None = None,
        results: Mapping[str, ToolResultContent] | None = None,
        outcomes: Mapping[str, ToolOutcome] | None = None,
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(entry, context, id=id, classes=classes)
        self._results: dict[str, ToolResultContent] = dict(results or {})
        self._outcomes: dict[str, ToolOutcome] = dict(outcomes or {})
        self._cards: dict[str, ToolCallCard] = {}
        self._header: Static | None = None
        """The header as a line of its own, made when a bar of alternatives comes."""
        self._header_shown = Content("")
        self._below_header: tuple[DockArrangeResult, int, DockArrangeResult] | None = None
        self._status: Static | None = None
        """How the reply ended, made when there is something to say (most replies: never)."""
        self._text: str | None = None
        """The text of the paragraph the row paints, while it is the message's only part."""
        self._paragraph: Content | None = None
        """The paragraph painted (until the text part made from it is laid out)."""
        self._painted_height: tuple[int, Content, int] | None = None
        """(width, header, height) of the painted header and paragraph, once measured."""

    @property
    def message(self) -> Message | None:
        payload = self.entry.payload if self.entry is not None else None
        return payload if isinstance(payload, Message) else None

    def compose(self) -> ComposeResult:
        self._header_shown = self._header_text()
        message = self.message
        if message is not None:
            shown, note = bounded_message(message)  # a huge text: its head and a note
            status = status_of(message, self.context.retry_hint)
            plain_end = status is None and note is None
            lone = lone_paragraph_of(shown.content) if plain_end else None
            if lone is not None:
                self._paint_text(*lone)
                return
            yield from self._build_parts(shown)
            if note is not None:
                yield Static(Content(note), markup=False, classes="message-clipped")
            if status is not None:
                self._status = Static(markup=False, classes="message-status")
                yield self._status

    async def on_mount(self) -> None:
        self._show_header()
        self._show_status()

    # --- building ------------------------------------------------------------

    def _build_parts(self, message: Message) -> Iterable[Widget]:
        for block in content_runs(message.content):
            if isinstance(block, TextContent):
                if block.text.strip():
                    yield SegmentedMarkdown(block.text)
            elif isinstance(block, ThinkingContent):
                yield ThinkingBlock(block.text, redacted=block.redacted)
            elif isinstance(block, ToolCallContent):
                card = ToolCallCard(
                    block,
                    self._results.get(block.id),
                    self.context,
                    outcome=self._outcomes.get(block.id),
                )
                self._cards[block.id] = card
                yield card
            elif isinstance(block, ImageContent):
                yield ImageView(block, self.context)

    def _header_text(self) -> Content:
        message = self.message
        usage = usage_label(message.usage if message else None)
        return header_content(
            (message.model if message else "") or "",
            f" · {usage}" if usage else "",
            message.agent if message else None,
            self.context,
            self.entry_id,
        )

    def _show_header(self) -> None:
        text = self._header_text()
        # A header on one line that stays on one line (nearly all: the model
        # and the usage) is repainted, without a layout pass.
        header, shown = self._header, self._header_shown
        self._header_shown = text
        if header is not None:
            width = header.content_size.width
            stays = header.content_size.height == 1 and 0 < text.cell_length <= width
            header.update(text, layout=not stays)
            return
        if text == shown:
            return  # (the same words: mounted, or a render without new usage)
        width = self.content_size.width
        stays = 0 < text.cell_length <= width and shown.cell_length <= width
        self.refresh(layout=not stays)

    @property
    def header_text(self) -> str:
        """The header's text, as shown."""
        return self._header_shown.plain

    def _header_style(self) -> tuple[str, ...]:
        """The component classes the header is painted with."""
        return ("message-header",)

    def _children_coming(self) -> None:
        self._make_text_part()
        if self._header is None:
            self._header = Static(self._header_shown, markup=False, classes="message-header")
            self.mount(self._header, before=0 if self.children else None)
            self._below_header = None
            self.refresh(layout=True)

    def _header_height(self, width: int) -> int:
        """Lines the painted header takes at ``width`` (asked at every layout pass)."""
        if self._header is not None or width <= 0:
            return 0
        text = self._header_shown
        if 0 < text.cell_length <= width and "\n" not in text.plain:
            return 1
        # Textual reads the styles as a RulesMap here too (Widget.get_content_height).
        return text.get_height(cast(RulesMap, self.styles), width)

    def render(self) -> RenderResult:
        if self._header is not None:
            return super().render()
        header = self._header_shown.stylize_before(self.get_visual_style(*self._header_style()))
        paragraph = with_margin(self._paragraph)
        return header if paragraph is None else header + "\n" + paragraph

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        arranged = super().arrange(size, optimal)
        top = self._header_height(size.width)
        if not top:
            return arranged
        kept = self._below_header
        if kept is not None and kept[0] is arranged and kept[1] == top:
            return kept[2]
        below = _BelowHeader(
            [p._replace(region=p.region.translate((0, top))) for p in arranged.placements],
            arranged.widgets,
            arranged.scroll_spacing,
        )
        self._below_header = (arranged, top, below)
        return below

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self.children:
            if self._paragraph is not None:
                return self._painted_height_at(width)
            return self._header_height(width)
        return super().get_content_height(container, viewport, width)

    # --- a painted paragraph -----------------------------------------------------

    @property
    def paragraph(self) -> Content | None:
        """The paragraph the row paints (None: its parts show its content)."""
        return self._paragraph if self._text is not None else None

    def action_link(self, href: str) -> None:
        """A link of the painted paragraph was clicked: opened, as a part opens one."""
        self.app.open_url(href)

    def _painted_height_at(self, width: int) -> int:
        known, header = self._painted_height, self._header_shown
        if known is None or known[0] != width or known[1] is not header:
            styles = cast(RulesMap, self.styles)  # as in Widget.get_content_height
            height = self._render().get_height(styles, width)
            known = self._painted_height = (width, header, height)
        return known[2]

    def _paint_text(self, text: str, paragraph: Content) -> None:
        """Paint ``paragraph`` (of ``text``) under the header."""
        self._text = text
        if paragraph != self._paragraph:
            self._paragraph, self._painted_height = paragraph, None
            self.refresh(layout=True)

    def _make_text_part(self) -> AwaitMount | None:
        """The painted paragraph becomes the message's text part (which paints
        it too) before another child comes below the header; the row paints it
        until the part is laid out over it."""
        text = self._text
        if text is None:
            return None
        self._text = None
        part = self._text_part(text)
        self.call_after_refresh(self._stop_painting_over, part)
        return self.mount(part, before=0 if self.children else None)

    def _text_part(self, text: str) -> SegmentedMarkdown:
        return SegmentedMarkdown(text)

    def _stop_painting_over(self, part: SegmentedMarkdown) -> None:
        if (
            part.is_attached
            and self.display
            and not (part.size.height and part.shows_its_text)  # not laid out, or no blocks yet
        ):
            self.call_after_refresh(self._stop_painting_over, part)
            return
        self._paragraph, self._painted_height = None, None
        self.refresh()

    def _show_status(self) -> None:
        message = self.message
        status = status_of(message, self.context.retry_hint) if message is not None else None
        if status is None:
            if self._status is not None:
                self._status.display = False
            return
        self._set_status(*status)

    def _set_status(self, text: str, css_class: str) -> None:
        """Show the status line (made and mounted below everything the first time)."""
        line = self._status
        if line is None:
            self._make_text_part()
            line = self._status = Static(markup=False, classes="message-status")
            self.mount(line)
        line.display = True
        line.set_classes(f"message-status {css_class}")
        line.update(Content(text))

    # --- updates --------------------------------------------------------------

    async def set_tool_result(
        self, result: ToolResultContent, outcome: ToolOutcome | None = None
    ) -> None:
        """Show a tool result (and how the call ended) in the card of its call."""
        self._results[result.tool_call_id] = result
        if outcome is not None:
            self._outcomes[result.tool_call_id] = outcome
        card = self._cards.get(result.tool_call_id)
        if card is not None:
            await card.set_result(result, outcome)

    @property
    def text_parts(self) -> list[SegmentedMarkdown]:
        """The Markdown parts, in order."""
        return [child for child in self.children if isinstance(child, SegmentedMarkdown)]

    @property
    def source(self) -> str:
        """The Markdown text shown (all text parts)."""
        if self._text is not None:
            return self._text
        return "".join(part.source for part in self.text_parts)

    def update_visibility(self, top: int, bottom: int) -> None:
        """Hide Markdown segments far outside screen rows ``top``..``bottom``."""
        for part in self.text_parts:
            part.update_visibility(top, bottom)

    async def _on_click(self, event: events.Click) -> None:
        status = self._status
        if status is not None and event.widget is status and status.has_class("-error"):
            event.stop()
            self.post_message(self.RetryRequested(self.entry_id))
