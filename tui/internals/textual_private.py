"""Every use of Textual's private API, in one place.

Textual offers no public way to move a scroll position inside a layout pass
(and a running scroll animation with it), to follow the bottom again, to keep
a Markdown widget's source in step after removing blocks, to make or append
its blocks without holding every screen update, to give the default screen a
result callback, to paint a widget that did not change from the lines it
gave last time, to know when a widget's layout (its descendants' included)
last changed, to paint a scrollbar without Rich's console, to hold screen
updates while a key is on its way to its widget, to paint one widget (or the
screen) at once, to lay a screen out at once for a widget's request, to show
a text of one paragraph as a Markdown widget's paragraph shows it, or to
parse keys read from the terminal. These do, through internals that may
change in any release: Textual is pinned, and :func:`check_version` (run by a
test) fails loudly on a version these were not checked against, so an upgrade
starts by reading this module.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING

import textual
from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual._animator import SimpleAnimation
from textual._styles_cache import StylesCache
from textual.await_complete import AwaitComplete
from textual.screen import Screen
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.widget import Widget

from tui.internals.keys_first import ui_first

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from textual.content import Content
    from textual.geometry import Region
    from textual.message import Message
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownBlock

KNOWN_VERSIONS = ("8.2.",)
"""Textual releases (prefixes) this module was checked against."""


PATCHES_SWITCH = "TANGENTS_TEXTUAL_PATCHES"
"""The environment variable that chooses the speed patches, over the config's
``textual_patches``: ``0`` (or ``off``, ``false``, ``no``) none, ``1`` (or
``on``, ``true``, ``yes``, ``all``) all, or a comma list of names (see
:data:`PATCH_NAMES`): ``quick_scrollbars,reuse_renders`` only those, and
``-reuse_renders`` every one but that (how each is measured on and off)."""


def patches_wanted(setting: bool = True) -> frozenset[str]:
    """The names of the speed patches wanted (:func:`patch_textual`): the switch
    in the environment, else all or none as ``setting`` (the config) says."""
    value = (os.environ.get(PATCHES_SWITCH) or "").strip().lower()
    every = frozenset(PATCH_NAMES)
    if not value:
        return every if setting else frozenset()
    if value in ("0", "off", "false", "no"):
        return frozenset()
    if value in ("1", "on", "true", "yes", "all"):
        return every
    names = [name.strip() for name in value.split(",") if name.strip()]
    left_out = {name[1:] for name in names if name.startswith("-")}
    chosen = {name for name in names if not name.startswith("-")}
    return frozenset((chosen or every) - left_out) & every


def installed_version() -> str:
    """Textual's version from its ``.dist-info`` folder's name: importing
    ``importlib.metadata`` to read it (``textual.__version__``) would cost the
    app's start more than every patch wins."""
    site = os.path.dirname(os.path.dirname(textual.__file__))
    prefix = "textual-"
    for name in os.listdir(site):
        if name.startswith(prefix) and name.endswith(".dist-info"):
            return name[len(prefix) : -len(".dist-info")]
    return textual.__version__


def check_version(version: str | None = None) -> None:
    """Raise when Textual (``version``, else the installed one) is a release the
    private uses here were not checked against. Not run at import: Textual's
    version is read from its metadata, which costs the app's start."""
    version = version or installed_version()
    if not version.startswith(KNOWN_VERSIONS):
        raise RuntimeError(
            f"Textual {version} is not one of {', '.join(KNOWN_VERSIONS)}: check every use "
            f"of its private API in {__name__} (and add the version to KNOWN_VERSIONS)"
        )


def following(widget: Widget) -> bool:
    """Is the widget anchored to its bottom and still following it?"""
    return widget._anchored and not widget._anchor_released


def anchored(widget: Widget) -> bool:
    """Was the widget anchored (even if the user has scrolled away since)?"""
    return widget._anchored


def layout_count(widget: Widget) -> int:
    """How many layout changes ``widget`` has had, its descendants' included
    (Textual's arrangement cache key): a measure made at the same count holds."""
    return widget._layout_updates


def mark_anchored(widget: Widget) -> None:
    """Anchor without jumping to the bottom: following resumes once the user
    scrolls there (call :meth:`Widget.release_anchor` after)."""
    widget._anchored = True


def shift_scroll(widget: Widget, delta: int) -> None:
    """Scroll ``widget`` by ``delta`` rows without a repaint of its own (inside a
    layout pass), moving its scrollbar and any running scroll animation with it."""
    scroll_y = max(0.0, widget.scroll_y + delta)
    widget.set_reactive(Widget.scroll_y, scroll_y)
    widget.set_reactive(Widget.scroll_target_y, max(0.0, widget.scroll_target_y + delta))
    if widget._vertical_scrollbar is not None:
        widget.vertical_scrollbar.set_reactive(ScrollBar.position, scroll_y)
    animation = widget.app.animator._animations.get((id(widget), "scroll_y"))
    if isinstance(animation, SimpleAnimation) and isinstance(animation.end_value, (int, float)):
        animation.start_value += delta  # type: ignore[operator]
        animation.end_value += delta
        if isinstance(animation.final_value, (int, float)):
            animation.final_value += delta


_textual_render_widget = StylesCache.render_widget
_textual_clear = StylesCache.clear
_textual_set_dirty = StylesCache.set_dirty


def _render_widget_again(cache: StylesCache, widget: Widget, crop: Region) -> list[Strip]:
    """Textual's ``StylesCache.render_widget``, which gives the lines it gave last
    time when nothing was made dirty since (see :func:`reuse_renders`)."""
    filters = tuple(widget.get_line_filters())
    hovering_link = widget.auto_links and widget.hover_style._link_id
    last: tuple[Region, tuple[object, ...], list[Strip]] | None = cache.__dict__.get("_last")
    if (
        last is not None
        and not hovering_link
        and not cache._dirty_lines
        and last[0] == crop
        and last[1] == filters
    ):
        return last[2]
    strips = _textual_render_widget(cache, widget, crop)
    cache._last = None if hovering_link else (crop, filters, strips)  # type: ignore[attr-defined]
    return strips


def _clear(cache: StylesCache) -> None:
    cache._last = None  # type: ignore[attr-defined]
    _textual_clear(cache)


def _set_dirty(cache: StylesCache, *regions: Region) -> None:
    cache._last = None  # type: ignore[attr-defined]
    _textual_set_dirty(cache, *regions)


def reuse_renders() -> None:
    """Paint a widget that did not change from the lines it gave last time.

    Each time the screen is painted where a widget is (every widget in view
    when the chat scrolls by a line), Textual asks it for its lines again: its
    line cache has them, but finding its background, region and opacity and
    applying the line filters, widget by widget, was much of a short
    exchange's painting. Every change to what a widget shows goes through its
    line cache (``clear`` or ``set_dirty``: a refresh, a new size, a style
    update), which forgets the lines kept here; a link under the mouse is
    styled on every paint, so a widget with one is rendered as Textual does.
    Applies to every widget from then on (idempotent)."""
    # A swap: its first parameter is named for what it is, not ``self``.
    StylesCache.render_widget = _render_widget_again  # type: ignore[method-assign,assignment]
    StylesCache.clear = _clear  # type: ignore[method-assign,assignment]
    StylesCache.set_dirty = _set_dirty  # type: ignore[method-assign,assignment]


_textual_scrollbar_lines = ScrollBar.render_lines


def _scrollbar_lines(bar: ScrollBar, crop: Region) -> list[Strip]:
    """The lines of a vertical scrollbar, made from its segments (see
    :func:`quick_scrollbars`); Textual's own way for any other."""
    renderable = bar.render()
    style = getattr(renderable, "style", None)
    if (
        not bar.vertical
        or type(renderable) is not ScrollBarRender
        or not isinstance(style, Style)
        or bar.app.ansi_color
    ):
        return _textual_scrollbar_lines(bar, crop)
    width, height = bar.outer_size
    filters = tuple(bar.get_line_filters())
    key: tuple[object, ...] = (crop, width, height, renderable.virtual_size, renderable.window_size)
    key += (renderable.position, style, bar.visual_style, filters)
    last: tuple[object, list[Strip]] | None = bar.__dict__.get("_last_lines")
    if last is not None and last[0] == key:
        return last[1]
    segments = ScrollBarRender.render_bar(
        size=height,
        virtual_size=renderable.virtual_size,
        window_size=renderable.window_size,
        position=renderable.position,
        thickness=width,
        vertical=True,
        back_color=style.bgcolor or RichColor.parse("#555555"),
        bar_color=style.color or RichColor.parse("bright_magenta"),
    ).segments
    base = bar.visual_style.rich_style
    background = bar.background_colors[1]
    lines = []
    for segment in segments[crop.y : crop.bottom]:
        line = Strip([Segment(segment.text, base + segment.style)], width)
        for line_filter in filters:
            line = line.apply_filter(line_filter, background)
        lines.append(line.crop(*crop.column_span))
    bar._last_lines = (key, lines)  # type: ignore[attr-defined]
    return lines


def quick_scrollbars() -> None:
    """Make a vertical scrollbar's lines straight from its segments.

    Textual paints a scrollbar through Rich's console, line by line through
    the widget's line cache; the chat's scrollbar changes at every exchange
    (the content grows) and was repainted in full twice an exchange, the
    dearest widget on the screen. The lines made here are the ones
    Textual makes, its line filters applied (a test compares them); a
    horizontal scrollbar, a renderer or style of one's own or ANSI colours
    take Textual's way. Applies to every scrollbar from then on (idempotent)."""
    # A swap, its first parameter named for what it is (not ``self``); only
    # scrollbars call it, so it takes a ScrollBar where Textual declares a Widget.
    ScrollBar.render_lines = _scrollbar_lines  # type: ignore[method-assign,assignment]


_textual_on_timer_update = Screen._on_timer_update


def updates_after_keys(key_waiting: Callable[[], bool]) -> None:
    """Hold the screen's updates while ``key_waiting()``: a key read is on its
    way to its widget.

    A streaming reply asks for a layout pass at nearly every frame (dearer as
    the reply grows), and the screen's update timer would run it between a
    key read and its handler (a few hops through message queues): the key's
    echo, painted as soon as it is handled (:func:`paint_now`), waited for
    it. A tick that finds a key waiting does nothing; Textual pauses the
    timer only in the update itself, so it ticks again a period later."""

    def on_timer_update(screen: Screen) -> None:
        if not key_waiting():
            _textual_on_timer_update(screen)

    # A swap: its first parameter is named for what it is, not ``self``.
    Screen._on_timer_update = on_timer_update  # type: ignore[method-assign,assignment]


PATCH_NAMES = (
    "reuse_renders",
    "quick_scrollbars",
    "updates_after_keys",
)
"""Every speed patch, by the name of the function that puts it in place."""

_patched: frozenset[str] | None = None


def patch_textual(wanted: Collection[str] = PATCH_NAMES) -> frozenset[str]:
    """The speed patches named in ``wanted`` (:data:`PATCH_NAMES`), once per
    process: paint again only what changed, paint scrollbars quickly, hold
    updates while a key is on its way (:attr:`UiFirst.key_waiting`). None on a Textual
    release they were not checked against (one line in Textual's log says
    so): the app is correct without them, only slower. Returns the names of
    those in place."""
    global _patched
    if _patched is not None:
        return _patched
    _patched = frozenset()
    if not wanted:
        return _patched
    try:
        check_version()
    except RuntimeError as error:
        textual.log.warning(f"Textual runs unpatched: {error}")
        return _patched
    applied = []
    for name in PATCH_NAMES:
        if name in wanted:
            if name == "updates_after_keys":
                updates_after_keys(lambda: ui_first.key_waiting)
            else:
                globals()[name]()
            applied.append(name)
    _patched = frozenset(applied)
    return _patched


def patched() -> frozenset[str]:
    """The speed patches :func:`patch_textual` put in place (none before it ran)."""
    return _patched or frozenset()


def paint_now(widget: Widget) -> bool:
    """Paint ``widget`` at once, alone: a key's echo, not waiting for the screen
    update timer's next tick, nor for a layout pass due for other widgets (a
    streaming reply's) that the next update would do first. False,
    and the next update paints it, when it cannot be: it is not a widget on the
    top screen, a batch is held, or a layout pass is due for it (it grew)."""
    if isinstance(widget, Screen) or not widget.is_attached:
        return False
    app, screen = widget.app, widget.screen
    if (
        screen is not app.screen
        or app.is_inline
        or app._batch_count
        or widget._layout_required
        or any(widget in waiting for waiting in screen._layout_widgets.values())
    ):
        return False
    others = screen._dirty_widgets - {widget}
    screen._compositor.update_widgets({widget})
    screen._compositor_refresh()
    screen._dirty_widgets |= others
    return True


def lay_out_now(widget: Widget) -> None:
    """Lay out and paint ``widget``'s screen at once for the layout (and paint)
    ``widget`` asked for, as the screen's update timer would once the request
    had reached it: a few message hops later, each of them behind whatever
    else the loop runs. The request is taken here, as ``Widget._check_refresh``
    takes it (the containers up to the first of a fixed size arrange again),
    so it makes no second pass when it would have reached the screen."""
    screen = widget.screen
    if widget._layout_required:
        widget._layout_required = False
        for ancestor in widget.ancestors:
            if not isinstance(ancestor, Widget):
                break
            ancestor._clear_arrangement_cache()
            ancestor._layout_updates += 1
            if not ancestor.styles.auto_dimensions:
                break
        screen._layout_required = True
    if widget._repaint_required:
        widget._repaint_required = False
        screen._dirty_widgets.add(widget)
    screen.check_idle()  # the timer's next tick does it if this update waits (a key)
    update_now(screen)


def update_now(screen: Screen) -> None:
    """Lay out and paint ``screen`` at once, as its update timer's next tick
    would (up to a frame later): for a change a key made that should be in
    the frame with its echo (the message Enter sent)."""
    screen._on_timer_update()


def key_events(text: str) -> list[Message]:
    """The events the terminal driver makes of ``text`` read from the terminal
    (keys, pastes), as its input thread parses what it reads."""
    from textual._xterm_parser import XTermParser

    if not text:
        return []
    parser = XTermParser()
    return [*parser.feed(text), *parser.feed("")]


def set_markdown_source(markdown: Markdown, source: str) -> None:
    """Keep a Markdown widget's idea of its source in step after some of its
    blocks were removed by hand."""
    markdown._markdown = source


_parsers = threading.local()
"""Each thread's default parser: making one compiles its rules, and a
parser keeps state while it finds links, so no two threads share one."""


def _parser(markdown: Markdown) -> MarkdownIt:
    """The parser the Markdown widget's own ``update`` and ``append`` use (the
    default one made once per thread that parses)."""
    factory = markdown._parser_factory
    if factory is not None:
        return factory()
    return _default_parser()


def _default_parser() -> MarkdownIt:
    """The parser of a Markdown widget made without a parser factory, this thread's."""
    parser: MarkdownIt | None = getattr(_parsers, "default", None)
    if parser is None:
        from markdown_it import MarkdownIt

        parser = _parsers.default = MarkdownIt("gfm-like")
    return parser


LINKS_SAMPLE = "See https://example.com/a?b=1, www.example.org, notes.md and me@example.net."
"""A text with every kind of link the default parser finds (a scheme, a bare
host, a file name with a country's domain, an email address)."""


def warm_link_patterns() -> None:
    """Make the paragraph of :data:`LINKS_SAMPLE` in this thread: the parser's
    link finder compiles its patterns at the first text that may hold a link
    (long enough to pause a stream, most of it at the first with a host name:
    ``notes.md`` is one),
    into ``re``'s cache, which every thread's parser reads."""
    lone_paragraph(LINKS_SAMPLE)


def lone_paragraph(source: str) -> Content | None:
    """What a Markdown widget (made without a parser factory) shows for
    ``source`` when it is one paragraph and nothing else: the content of that
    paragraph's block, made by the block's own conversion of its inline token
    (which reads nothing of the block); None for any other text."""
    from textual.widgets.markdown import MarkdownBlock

    tokens = _default_parser().parse(source)
    if [token.type for token in tokens] != ["paragraph_open", "inline", "paragraph_close"]:
        return None
    return MarkdownBlock._token_to_content(None, tokens[1])  # type: ignore[arg-type]


async def markdown_blocks(markdown: Markdown, source: str) -> list[MarkdownBlock]:
    """The blocks a Markdown widget would mount for ``source``: parsed in a
    thread, as ``Markdown.update`` does, and made on the loop."""
    tokens = await asyncio.to_thread(lambda: _parser(markdown).parse(source))
    return list(markdown._parse_markdown(tokens))


def append_markdown(
    markdown: Markdown, fragment: str, first: Callable[[], Awaitable[None]] | None = None
) -> AwaitComplete:
    """``Markdown.append`` without its ``App.batch_update``, which Textual holds
    while the new blocks mount (every other task's loop turns), so that no
    screen update, a key's echo included, is painted meanwhile. Without it a
    frame may show the last block grown before the blocks after it: text that
    is streaming in anyway.

    ``first`` is awaited before the blocks are made, with the widget's lock
    held (an update of the whole text waits behind it, as behind Textual's
    append); the source takes the fragment at once, as in Textual."""
    from textual.widgets.markdown import MarkdownBlock

    parser = _parser(markdown)
    markdown._markdown = markdown.source + fragment
    start_line = markdown._last_parsed_line
    updated_source = "".join(markdown._markdown.splitlines(keepends=True)[start_line:])

    async def await_append() -> None:
        async with markdown.lock:
            if first is not None:
                await first()
            tokens = parser.parse(updated_source)
            existing = [child for child in markdown.children if isinstance(child, MarkdownBlock)]
            for token in reversed(tokens):
                if token.map is not None and token.level == 0:
                    markdown._last_parsed_line += token.map[0]
                    break
            new_blocks = list(markdown._parse_markdown(tokens))
            for block in new_blocks:
                start, end = block.source_range
                block.source_range = (start + start_line, end + start_line)
            if existing and new_blocks:
                last = existing[-1]
                last.source_range = new_blocks[0].source_range
                try:
                    await last._update_from_block(new_blocks[0])
                except IndexError:
                    pass
                else:
                    new_blocks = new_blocks[1:]
            if new_blocks:
                await markdown.mount_all(new_blocks)

    return AwaitComplete(await_append())


def give_result_callback(screen: Screen) -> None:
    """Give a screen the empty result callback :meth:`App.switch_screen` gives
    every screen it switches to (Textual gives its default screen none)."""
    screen._push_result_callback(screen, None)
