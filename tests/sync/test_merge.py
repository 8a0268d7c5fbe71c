"""Merging what every device's journals say (pure)."""

from __future__ import annotations

from core.sync.hlc import Stamp
from core.sync.merge import FolderView


def line(kind: str, at: Stamp, value: object = None, session: str = "s1") -> dict[str, object]:
    return {"t": kind, "s": session, "v": value, "at": str(at)}


def title(text: str) -> dict[str, object]:
    return {"title": text, "by_user": True}


def test_a_deletion_wins_over_older_writes_and_loses_to_later_ones() -> None:
    view = FolderView()
    view.add_register_line("a", line("title", Stamp(100, 0, "a"), title("old")))
    view.add_register_line("b", line("deleted", Stamp(200, 0, "b")))
    assert view.dead("s1")
    view.add_register_line("a", line("leaf", Stamp(300, 0, "a"), "e9"))
    assert not view.dead("s1")


def test_the_order_lines_are_read_in_does_not_change_the_winner() -> None:
    lines = [
        ("a", line("title", Stamp(100, 0, "a"), title("first"))),
        ("b", line("title", Stamp(100, 1, "b"), title("second"))),
        ("c", line("title", Stamp(99, 5, "c"), title("older"))),
    ]
    for order in (lines, lines[::-1]):
        view = FolderView()
        for device, item in order:
            view.add_register_line(device, item)
        winner = view.value("title", "s1")
        assert winner is not None and winner.value == title("second")


def test_each_device_keeps_its_own_leaf() -> None:
    view = FolderView()
    view.add_register_line("a", line("leaf", Stamp(100, 0, "a"), "ea"))
    view.add_register_line("b", line("leaf", Stamp(200, 0, "b"), "eb"))
    view.add_register_line("a", line("leaf", Stamp(50, 0, "a"), "stale"))
    assert {device: w.value for device, w in view.leaves["s1"].items()} == {"a": "ea", "b": "eb"}


def test_lines_of_the_wrong_shape_are_skipped() -> None:
    view = FolderView()
    for bad in (
        {"t": "title", "s": "s1", "v": "no dict", "at": str(Stamp(1, 0, "a"))},
        {"t": "archived", "s": "s1", "v": True, "at": "yesterday"},
        {"t": "rename-everything", "s": "s1", "at": str(Stamp(1, 0, "a"))},
        {"t": "label", "s": "s1", "v": "x", "at": str(Stamp(1, 0, "a"))},
    ):
        view.add_register_line("a", bad)
    view.add_entry_line("a", {"t": "entry", "entry": {"id": "x"}})
    assert view.skipped == 5 and view.registers == {} and view.entries == {}
