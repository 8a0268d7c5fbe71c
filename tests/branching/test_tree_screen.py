"""The tree screen in a tiny host app: choose, cancel, filter, search, unfold."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from core.branching.tree import SessionTree
from core.sessions.ids import short_id
from tests.branching.builders import entry, from_parents
from tui.screens.tree import TreeScreen, TreeView

UNSET = object()


class Host(App[None]):
    def __init__(self, session_tree: SessionTree) -> None:
        super().__init__()
        self.session_tree = session_tree
        self.result: object = UNSET

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(TreeScreen(self.session_tree), self._done)

    def _done(self, result: str | None) -> None:
        self.result = result


def small_tree() -> SessionTree:
    """hello / hi, then two alternatives to the second question, a label on one."""
    entries = [
        entry(0, None, "hello there", "user"),
        entry(1, "e000000", "hi! how can I help?", "assistant"),
        entry(2, "e000001", "explain [bold]markup[/bold]", "user"),
        entry(3, "e000002", "It is Rich's markup.", "assistant"),
        entry(4, "e000001", "explain branches", "user"),
        entry(5, "e000004", "A branch is an alternative path.", "assistant"),
        entry(6, "e000005", "thanks", "user"),
    ]
    return SessionTree.from_entries(entries, {"e000003": "good answer"}, "e000006")


def rows_of(app: Host) -> list[str]:
    return [r.entry_id for r in app.screen.query_one(TreeView).rows]


async def test_opens_on_the_leaf_and_enter_returns_the_selected_id() -> None:
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(TreeView)
        assert view.current_row.entry_id == "e000006"
        assert len(view.rows) == 7
        await pilot.press("up", "up")
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == "e000004"


async def test_escape_returns_none() -> None:
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert app.result is None


async def test_filter_cycles_user_then_labelled_then_all() -> None:
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("tab")
        assert rows_of(app) == ["e000000", "e000002", "e000004", "e000006"]
        await pilot.press("ctrl+f")
        assert rows_of(app) == ["e000003"]
        await pilot.press("tab")
        assert len(rows_of(app)) == 7


async def test_typing_searches_and_enter_picks_the_match() -> None:
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*"markup")
        assert rows_of(app) == ["e000002", "e000003"]
        await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
    assert app.result == "e000003"


async def test_enter_on_a_fold_row_unfolds_it() -> None:
    tree = SessionTree.from_entries(from_parents([None] + list(range(19))), {}, "e000019")
    app = Host(tree)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(TreeView)
        assert [r.is_fold for r in view.rows] == [False, True, False]
        await pilot.press("up", "enter")
        await pilot.pause()
        assert len(view.rows) == 20 and app.result is UNSET
        assert view.current_row.entry_id == "e000001"


async def test_entry_text_is_never_markup() -> None:
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(TreeView)
        line = view.render_line(2 - view.scroll_offset.y).text
        assert "explain [bold]markup[/bold]" in line


def test_tree_screen_snapshot(snap_compare) -> None:
    """A branched session: two alternatives under "hi", the current path marked, a label, the leaf selected."""
    assert snap_compare(Host(small_tree()), terminal_size=(90, 20))


async def test_each_row_shows_its_short_id_for_from() -> None:
    """Issue 33 item 9: ``--from`` takes an entry's short id; the tree shows it."""
    app = Host(small_tree())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(TreeView)
        for y, row in enumerate(view.rows):
            if row.is_fold:
                continue
            line = view.render_line(y - view.scroll_offset.y).text.rstrip()
            assert line.endswith(short_id(row.entry_id)), line
