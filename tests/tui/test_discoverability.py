"""Hints that name the real keys (issue 33 item 8): the welcome and the demo's
tips said "the branch key" and "the model picker" and never named ctrl+up,
which every message action needs; ctrl+c did nothing and said nothing."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from core.providers import demo
from tests.tui.helpers import (
    notifications,
    running,
    screen_text,
    send,
    settle,
    type_text,
    wait_for,
)
from tui import keymap
from tui.screens.tree import TreeScreen
from tui.screens.welcome import welcome_text

NAMED = ("focus_messages", "branch_here", "pick_model", "quit")


@pytest.mark.parametrize("no_key", [True, False])
def test_the_welcome_names_the_keys_a_newcomer_needs(no_key: bool) -> None:
    text = welcome_text("demo", no_key=no_key, overrides={}).plain
    for action in NAMED:
        assert keymap.first_key(action) in text, action
    remapped = welcome_text("demo", no_key=no_key, overrides={"branch_here": "alt+y"}).plain
    assert "alt+y" in remapped and keymap.first_key("branch_here") not in remapped


def test_every_key_the_demo_tips_name_is_bound_to_what_the_tip_says() -> None:
    """The demo lives in core and cannot read the keymap: its tips name the
    default keys, each checked here against the action it describes."""
    tips = "\n".join(demo._TIPS + (demo.MODEL_TIP,))
    named = set(re.findall(r"\b(?:ctrl|alt|shift)\+[^\s,)]+", tips))
    assert named, "the tips name no key"
    for action, key in demo.TIP_KEYS.items():
        assert keymap.first_key(action) == key, action
        assert key in tips, key
    assert named <= set(demo.TIP_KEYS.values())
    assert "the branch key" not in tips and "the model picker" not in tips


async def test_ctrl_c_says_how_to_quit() -> None:
    async with running(["--model", "demo"]) as pilot:
        await type_text(pilot, "half a thought")
        await pilot.press("ctrl+c")
        quit_key = keymap.first_key("quit")
        await wait_for(lambda: any(quit_key in n for n in notifications(pilot)), pilot)
        assert pilot.app.is_running
        assert "half a thought" in screen_text(pilot)


async def test_the_tree_hint_names_the_keys_the_keymap_binds() -> None:
    """Each ``key: what`` of the tree's hint is a key bound on that screen, the
    config's keymap applied (the hint was written out with the defaults)."""
    (Path(os.environ["TANGENTS_HOME"]) / "config.toml").write_text(
        '[keymap]\ntree_mark = "alt+k"\ntree_filter = "ctrl+f"\n'
    )
    async with running(["--model", "demo"]) as pilot:
        await send(pilot, "hello")
        await pilot.press("ctrl+g")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, TreeScreen)
        hint = str(screen.query_one("#tree-body").border_subtitle)
        named = [part.split(":")[0].strip() for part in hint.split(" · ")]
        bound = set(screen.active_bindings)
        assert [k for k in named if ("escape" if k == "esc" else k) not in bound] == [], hint
        assert "alt+k" in named and "ctrl+f" in named
