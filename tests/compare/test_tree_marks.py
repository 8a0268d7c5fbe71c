"""Marks in the tree screen: ctrl+k marks, a second mark opens the two
branches side by side, Enter there keeps one (the tree closes on its leaf)."""

from __future__ import annotations

from tests.branching.test_tree_screen import Host, small_tree
from tui.screens.compare import CompareScreen
from tui.screens.tree import TreeScreen, TreeView


def select(app: Host, entry_id: str) -> None:
    view = app.screen.query_one(TreeView)
    view.go(next(i for i, r in enumerate(view.rows) if r.entry_id == entry_id))


async def test_two_marks_compare_the_branches_and_enter_keeps_one() -> None:
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        select(app, "e000003")
        await pilot.press("ctrl+k")
        await pilot.pause()
        assert app.screen.query_one(TreeView).marked == {"e000003"}
        select(app, "e000006")
        await pilot.press("ctrl+k")
        await pilot.pause()
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        left, right = compare.columns
        assert "explain [bold]markup[/bold]" in left.text and "It is Rich's markup." in left.text
        assert "explain branches" in right.text and right.text.endswith("thanks")
        assert "[good answer]" in str(left.query_one(".compare-header").render())
        await pilot.press("enter")  # keeps the left one, focused first
        await pilot.pause()
    assert app.result == "e000003"


async def test_marking_again_unmarks_and_an_entry_on_the_others_path_is_refused() -> None:
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(TreeView)
        select(app, "e000005")
        await pilot.press("ctrl+k", "ctrl+k")
        assert view.marked == set()
        await pilot.press("ctrl+k")
        select(app, "e000001")  # an ancestor of the first mark
        await pilot.press("ctrl+k")
        await pilot.pause()
        assert isinstance(app.screen, TreeScreen)
        assert view.marked == {"e000005"}
        assert any("on the other's path" in n.message for n in app._notifications)
