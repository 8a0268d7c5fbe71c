"""The Textual internals the app relies on (tui/internals/textual_private.py) are
there, and an unknown Textual release is refused loudly, not discovered as
a scroll that jumps."""

from __future__ import annotations

import ast
import inspect

import pytest
from textual._animator import SimpleAnimation
from textual._styles_cache import StylesCache
from textual.app import App
from textual.geometry import Offset, Region
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown, TextArea
from textual.widgets.markdown import MarkdownBlock

from tui.internals import textual_private as private


def test_the_installed_textual_is_a_known_release() -> None:
    private.check_version()


def test_an_unknown_release_is_refused_with_what_to_check() -> None:
    with pytest.raises(RuntimeError, match=r"Textual 9\.0\.0 .*tui\.internals\.textual_private"):
        private.check_version("9.0.0")


def test_the_private_attributes_used_exist_with_their_meaning() -> None:
    widget = Widget()
    assert (widget._anchored, widget._anchor_released, widget._vertical_scrollbar) == (
        False,
        False,
        None,
    )
    assert not private.following(widget) and not private.anchored(widget)
    private.mark_anchored(widget)
    assert private.following(widget)
    widget.release_anchor()
    assert private.anchored(widget) and not private.following(widget)
    assert isinstance(App().animator._animations, dict)
    assert {"start_value", "end_value", "final_value"} <= set(
        inspect.signature(SimpleAnimation).parameters
    )
    markdown = Markdown("old")
    private.set_markdown_source(markdown, "new")
    assert markdown.source == "new"
    assert list(inspect.signature(Screen._push_result_callback).parameters)[:3] == [
        "self",
        "requester",
        "callback",
    ]
    assert (widget._dirty_regions, widget._repaint_regions) == (set(), set())
    # A widget asks the screen for a paint of its own (an Update) while this is set.
    assert widget._repaint_required is False
    assert "if self._repaint_required:" in inspect.getsource(Widget._check_refresh)
    assert (
        isinstance(widget._styles_cache, StylesCache) and widget._styles_cache._dirty_lines == set()
    )
    assert "hover_style._link_id" in inspect.getsource(private._textual_render_widget)
    # A screen update that does nothing leaves the timer ticking: Textual's pauses it first.
    update = inspect.getsource(private._textual_on_timer_update).split('"""', 2)[2].strip()
    assert update.startswith("self._update_timer.pause()")


SAMPLE = (
    "# Title\n\nA paragraph with *emphasis* and `code`.\n\n- one\n- two\n  - nested\n\n"
    "```py\nprint('x')\n```\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n1. first\n2. second\n\n"
    "last words"
)


def blocks_of(markdown: Markdown) -> list[tuple[str, tuple[int, int], int]]:
    return [
        (type(block).__name__, block.source_range, len(block.children))
        for block in markdown.query_children(MarkdownBlock)
    ]


async def test_appending_without_a_batch_makes_the_blocks_textual_makes() -> None:
    class Two(App):
        def compose(self):
            yield Markdown(id="textual")
            yield Markdown(id="ours")

    fragments = [SAMPLE[i : i + 7] for i in range(0, len(SAMPLE), 7)]
    async with Two().run_test() as pilot:
        textual_md = pilot.app.query_one("#textual", Markdown)
        ours = pilot.app.query_one("#ours", Markdown)
        for fragment in fragments:
            await textual_md.append(fragment)
            await private.append_markdown(ours, fragment)
        await pilot.pause()
        assert ours.source == textual_md.source == SAMPLE
        assert blocks_of(ours) == blocks_of(textual_md)
        assert len(blocks_of(ours)) >= 8


async def test_blocks_made_for_a_widget_are_the_ones_its_update_mounts() -> None:
    class One(App):
        def compose(self):
            yield Markdown(SAMPLE)

    async with One().run_test() as pilot:
        markdown = pilot.app.query_one(Markdown)
        await pilot.pause()
        made = await private.markdown_blocks(markdown, SAMPLE)
        assert [(type(b).__name__, b.source_range) for b in made] == [
            (name, span) for name, span, _ in blocks_of(markdown)
        ]


class Typing(App):
    CSS = "#other { height: 1; }"

    def compose(self):
        from textual.widgets import Static

        yield TextArea(id="typed")
        yield Static("other", id="other")


def painted_text(update) -> str:
    """The text of a screen update's lines."""
    return "\n".join(
        "".join(strip.text for strip in line.values() if strip is not None) for line in update.chops
    )


async def test_a_widget_is_painted_at_once_while_a_layout_pass_is_due_elsewhere() -> None:
    async with Typing().run_test(size=(40, 12)) as pilot:
        app = pilot.app
        area, other = app.query_one("#typed"), app.query_one("#other")
        await pilot.pause()
        updates = []
        display = app._display

        def recorded(screen, update):
            updates.append(update)
            return display(screen, update)

        app._display = recorded
        other.styles.height = 3  # a layout pass is due for another widget
        area.insert("typed-x")
        assert private.paint_now(area)
        [update] = updates
        assert "typed-x" in painted_text(update) and "other" not in painted_text(update)
        assert other.size.height == 1  # not laid out yet
        await pilot.pause()
        assert other.size.height == 3


async def test_a_widget_that_grew_waits_for_the_layout_pass() -> None:
    async with Typing().run_test(size=(40, 12)) as pilot:
        area = pilot.app.query_one("#typed")
        await pilot.pause()
        area.styles.height = 5
        assert not private.paint_now(area)
        assert not private.paint_now(pilot.app.screen)


class Lines(App):
    CSS = "Static { height: 1; } .loud { color: red; }"

    def compose(self):
        from textual.containers import VerticalScroll
        from textual.widgets import Static

        with VerticalScroll(id="scroll"):
            yield Static("shown", id="shown")
            yield Static("[@click=app.bell]a link[/]", id="linked")
            for index in range(30):
                yield Static(f"row {index}", id=f"row-{index}")


def lines_of(widget: Widget) -> list[Strip]:
    """The lines the compositor gets when it paints all of ``widget``."""
    return widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))


async def test_an_unchanged_widget_is_painted_from_the_lines_it_gave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    private.reuse_renders()
    async with Lines().run_test(size=(40, 10)) as pilot:
        await pilot.pause()
        shown = pilot.app.query_one("#shown")
        first = lines_of(shown)
        assert lines_of(shown) is first
        monkeypatch.setattr(StylesCache, "render_widget", private._textual_render_widget)
        assert lines_of(shown) is not first  # Textual renders it again


async def test_every_change_to_a_widget_is_painted(monkeypatch: pytest.MonkeyPatch) -> None:
    """New text, a new style, a new width, a filter turned on, a link under the mouse."""
    from textual.filter import Monochrome

    private.reuse_renders()
    async with Lines().run_test(size=(40, 10)) as pilot:
        app = pilot.app
        await pilot.pause()
        shown = app.query_one("#shown")
        lines_of(shown)
        shown.update("changed")
        await pilot.pause()
        assert lines_of(shown)[0].text.startswith("changed")
        before = lines_of(shown)
        shown.add_class("loud")
        await pilot.pause()
        assert lines_of(shown) != before
        assert any(s.style.color and s.style.color.name == "#ff0000" for s in lines_of(shown)[0])
        await pilot.resize_terminal(30, 10)
        await pilot.pause()
        assert lines_of(shown)[0].cell_length == shown.size.width < 38
        colored = lines_of(shown)
        app._filters.append(Monochrome())
        assert lines_of(shown) != colored
        app._filters.pop()
        assert lines_of(shown) == colored
        linked = app.query_one("#linked")
        plain = lines_of(linked)
        await pilot.hover("#linked", offset=(2, 0))
        await pilot.pause()
        hovered = lines_of(linked)
        assert hovered != plain and lines_of(linked) is not hovered  # styled at each paint
        await pilot.hover("#shown")
        await pilot.pause()
        assert lines_of(linked) == plain


class Scrolled(App):
    CSS = "#wide { scrollbar-size-vertical: 2; }"

    def compose(self):
        from textual.containers import VerticalScroll
        from textual.widgets import Static

        with VerticalScroll(id="thin"):
            for index in range(100):
                yield Static(f"row {index}")
        with VerticalScroll(id="wide"):
            for index in range(37):
                yield Static(f"row {index}")


async def test_a_scrollbar_is_painted_as_textual_paints_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """At every position, grabbed or hovered, thin or wide, whole or cropped."""
    private.quick_scrollbars()
    textual_scrollbar_lines = private._textual_scrollbar_lines
    monkeypatch.setattr(private, "_textual_scrollbar_lines", None)  # never Textual's way here
    async with Scrolled().run_test(size=(30, 24)) as pilot:
        await pilot.pause()
        compared = 0
        for name in ("#thin", "#wide"):
            view = pilot.app.query_one(name)
            bar = view.vertical_scrollbar
            for y in range(0, int(view.max_scroll_y) + 1, 3):
                view.scroll_to(y=y, animate=False)
                await pilot.pause()
                for state in ({}, {"mouse_over": True}, {"grabbed": Offset(0, 1)}):
                    bar.mouse_over, bar.grabbed = False, None
                    for attribute, value in state.items():
                        setattr(bar, attribute, value)
                    width, height = bar.outer_size
                    for crop in (Region(0, 0, width, height), Region(width - 1, 2, 1, height - 4)):
                        bar._styles_cache.clear()
                        textual_lines = textual_scrollbar_lines(bar, crop)
                        assert bar.render_lines(crop) == textual_lines
                        compared += 1
        assert compared > 50


async def test_a_horizontal_scrollbar_is_painted_by_textual(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    private.quick_scrollbars()
    painted: list[bool] = []
    textual_lines = private._textual_scrollbar_lines

    def recorded(bar, crop):
        painted.append(bar.vertical)
        return textual_lines(bar, crop)

    monkeypatch.setattr(private, "_textual_scrollbar_lines", recorded)
    async with Scrolled().run_test(size=(30, 24)) as pilot:
        await pilot.pause()
        bar = pilot.app.query_one("#thin").horizontal_scrollbar
        bar.render_lines(Region(0, 0, 5, 1))
    assert painted == [False]


def test_each_thread_parses_with_a_parser_of_its_own_made_once() -> None:
    """Making a parser compiles its rules; finding links keeps state in it."""
    from concurrent.futures import ThreadPoolExecutor

    markdown = Markdown()
    mine = private._parser(markdown)
    assert private._parser(markdown) is mine
    with ThreadPoolExecutor(1) as pool:
        theirs = pool.submit(private._parser, markdown).result()
        assert theirs is not mine and pool.submit(private._parser, markdown).result() is theirs


async def test_a_lone_paragraph_is_the_content_of_the_block_textual_makes() -> None:
    """Textual's own conversion, used without a block: it reads nothing of it."""
    from textual.widgets._markdown import MarkdownParagraph

    body = inspect.getsource(MarkdownBlock._token_to_content).split('"""', 2)[2]
    assert "self" not in body and "return content" in body
    texts = ("words", "*em* **strong** ~~s~~ `code` [link](http://x.example) www.auto.example")
    async with App().run_test() as pilot:
        for text in texts:
            markdown = Markdown(text)
            await pilot.app.mount(markdown)
            [block] = markdown.query(MarkdownBlock)
            assert isinstance(block, MarkdownParagraph)
            assert private.lone_paragraph(text) == block._content
    for other in ("", "# heading", "one\n\ntwo", "- item", "```\ncode\n```", "> quote"):
        assert private.lone_paragraph(other) is None


def compiled_while(monkeypatch: pytest.MonkeyPatch, parse) -> list[str]:  # type: ignore[no-untyped-def]
    """The patterns ``re`` compiles (not in its cache) while ``parse()`` runs."""
    import re

    compiled: list[str] = []
    compile_pattern = re._compiler.compile  # type: ignore[attr-defined]

    def counted(pattern, flags):  # type: ignore[no-untyped-def]
        compiled.append(str(pattern)[:40])
        return compile_pattern(pattern, flags)

    with monkeypatch.context() as patched:
        patched.setattr(re._compiler, "compile", counted)  # type: ignore[attr-defined]
        parse()
    return compiled


def test_link_patterns_warmed_in_a_thread_are_not_compiled_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first text that may hold a link compiles the parser's link patterns
    (~30 ms): done in a thread beforehand, the UI thread's parse finds them."""
    import re
    import threading

    text = "a reply about notes.md, www.example.com, https://x.example and me@example.net"
    private.lone_paragraph("warm this thread's parser")
    re.purge()
    assert compiled_while(monkeypatch, lambda: private.lone_paragraph(text))
    re.purge()
    warming = threading.Thread(target=private.warm_link_patterns)
    warming.start()
    warming.join()
    assert compiled_while(monkeypatch, lambda: private.lone_paragraph(text)) == []


def _in_a_fresh_process(code: str, **env: str) -> str:
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


_REPORT_PATCHES = """
from textual.scrollbar import ScrollBar
from textual._styles_cache import StylesCache
from tui.internals import textual_private as private
{setup}
done = private.patch_textual(private.patches_wanted())
swapped = ScrollBar.render_lines is not private._textual_scrollbar_lines or (
    StylesCache.render_widget is not private._textual_render_widget
)
print(bool(done), swapped, bool(private.patched()))
"""


@pytest.mark.parametrize("value", ["0", "off", "false", "no"])
def test_the_switch_off_leaves_every_textual_method_as_shipped(value: str) -> None:
    out = _in_a_fresh_process(_REPORT_PATCHES.format(setup=""), TANGENTS_TEXTUAL_PATCHES=value)
    assert out == "False False False"


def test_the_patches_are_in_place_by_default() -> None:
    out = _in_a_fresh_process(_REPORT_PATCHES.format(setup=""), TANGENTS_TEXTUAL_PATCHES="")
    assert out == "True True True"


def test_an_unknown_textual_release_runs_unpatched_not_crashed() -> None:
    setup = "private.KNOWN_VERSIONS = ('0.0.',)"
    out = _in_a_fresh_process(_REPORT_PATCHES.format(setup=setup), TANGENTS_TEXTUAL_PATCHES="1")
    assert out == "False False False"


def test_the_version_is_read_without_package_metadata() -> None:
    import textual

    assert private.installed_version() == textual.__version__


def test_with_the_switch_off_the_garbage_collector_is_left_alone() -> None:
    code = """
import gc
from tui.internals import gc_policy as _gc
threshold = gc.get_threshold()
_gc.take_charge(False)
_gc.pause_for_start_up()
_gc.defer_full_collections()
_gc.freeze_loaded()
print(gc.isenabled(), gc.get_freeze_count() == 0, gc.get_threshold() == threshold)
"""
    assert _in_a_fresh_process(code) == "True True True"


def test_the_switch_names_patches_to_keep_or_leave_out() -> None:
    report = _REPORT_PATCHES.format(setup="") + "print(sorted(done))\n"
    only = _in_a_fresh_process(report, TANGENTS_TEXTUAL_PATCHES="quick_scrollbars")
    assert only.splitlines()[-1] == "['quick_scrollbars']"
    but = _in_a_fresh_process(report, TANGENTS_TEXTUAL_PATCHES="-reuse_renders,-updates_after_keys")
    assert sorted(ast.literal_eval(but.splitlines()[-1])) == sorted(
        set(private.PATCH_NAMES) - {"reuse_renders", "updates_after_keys"}
    )


def test_the_config_turns_the_patches_off_and_the_environment_wins() -> None:
    code = "from tui.internals import textual_private as p; print(sorted(p.patches_wanted(False)))"
    assert _in_a_fresh_process(code, TANGENTS_TEXTUAL_PATCHES="") == "[]"
    assert _in_a_fresh_process(code, TANGENTS_TEXTUAL_PATCHES="1") == str(
        sorted(private.PATCH_NAMES)
    )
