"""What the app paints equals a full repaint from nothing, after every step of a
session (issue #31).

The speed patches reuse a widget's last lines unless it was marked dirty and
keep the compositor's map between layout passes: one missed mark and the
screen shows a stale line (a new user saw a reply drawn twice and a message
missing after resuming with another model, and a "stopped" marker not drawn
after Esc with a queued message). After each step here the screen as painted
(every widget's kept lines, the kept map) is compared with the screen laid
out and rendered again with every cache emptied. With the patches off
(``TANGENTS_TEXTUAL_PATCHES=0``) the same steps check Textual's own caches.
"""

from __future__ import annotations

import io

from fake_provider import Reply, Stall
from rich.console import Console

from tests.branching.chat_steps import chat, focus, write_config
from tests.tui.helpers import running, settle, type_text, wait_for
from tui.chat.chat_screen import ChatScreen
from tui.internals import textual_private as private
from tui.screens.tree import TreeScreen, TreeView


def _render(app) -> str:
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, color_system="truecolor"
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text(styles=True)


def painted_and_fresh(app) -> tuple[str, str]:
    """The screen from what is kept, then from nothing: every line cache emptied
    (Textual's own ``clear``, not the patched one) and the screen laid out again."""
    painted = _render(app)
    screen = app.screen
    for widget in [screen, *screen.walk_children(with_self=False)]:
        widget._styles_cache.__dict__.pop("_last", None)
        private._textual_clear(widget._styles_cache)
    screen._compositor._full_map_invalidated = True
    screen._compositor.reflow(screen, screen.size)
    return painted, _render(app)


async def same_as_fresh(pilot, step: str) -> None:
    await settle(pilot)
    painted, fresh = painted_and_fresh(pilot.app)
    assert painted == fresh, f"stale paint after: {step}"


async def test_every_step_paints_what_a_full_repaint_shows(fake_provider, fake_args) -> None:
    write_config("never")  # no branch-summary question between the steps
    async with running(fake_args, size=(80, 24)) as pilot:
        await chat(pilot, fake_provider, ("q1", "a1 " * 40), ("q2", "a2 " * 60))
        await same_as_fresh(pilot, "two exchanges")
        await pilot.press("pageup")
        await same_as_fresh(pilot, "PageUp")
        await pilot.press("pagedown")
        await same_as_fresh(pilot, "PageDown")

    other_model = [*fake_args]
    other_model[other_model.index("--model") + 1] = "openai/other"
    async with running([*other_model, "-c"], size=(80, 24)) as pilot:
        await same_as_fresh(pilot, "resumed with another model")
        await chat(pilot, fake_provider, ("q3", "a3 " * 30))
        await same_as_fresh(pilot, "a message after resuming with another model")

        fake_provider.script(Stall(seconds=30, after_chunks=2), Reply(text="after the queue"))
        await type_text(pilot, "q4")
        await pilot.press("enter")
        await wait_for(
            lambda: pilot.app.screen.replying and len(fake_provider.requests) >= 4, pilot
        )
        await type_text(pilot, "queued")
        await pilot.press("enter")
        await pilot.press("escape")
        await same_as_fresh(pilot, "Esc with a queued message")

        await focus(pilot, "q3")
        await pilot.press("enter")
        fake_provider.script(Reply(text="a3 edited"))
        await pilot.press("end", "space", "e", "enter")
        await same_as_fresh(pilot, "an edit sent")

        await focus(pilot, "q3 e")
        await pilot.press("left")
        await same_as_fresh(pilot, "the earlier alternative")
        await pilot.press("right")
        await same_as_fresh(pilot, "the later alternative")

        await type_text(pilot, "/tree")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, TreeScreen)
        view = pilot.app.screen.query_one(TreeView)
        view.cursor = next(i for i, row in enumerate(view.rows) if row.preview.startswith("a1"))
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, ChatScreen)
        await same_as_fresh(pilot, "a jump in the tree")
