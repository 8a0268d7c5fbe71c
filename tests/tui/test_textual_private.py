"""The Textual internals the app relies on (tui/widgets/_textual_private.py) are
there, and an unknown Textual release is refused loudly, not discovered as
a scroll that jumps."""

from __future__ import annotations

import inspect

import pytest
from textual._animator import SimpleAnimation
from textual.app import App
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Markdown

from tui.widgets import _textual_private as private


def test_the_installed_textual_is_a_known_release() -> None:
    private.check_version()


def test_an_unknown_release_is_refused_with_what_to_check() -> None:
    with pytest.raises(RuntimeError, match=r"Textual 9\.0\.0 .*tui\.widgets\._textual_private"):
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
