"""SessionTree against a naive in-memory model on random trees (hypothesis)."""

from __future__ import annotations

import random
import sys
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from core.branching.tree import SessionTree, shared_length
from core.sessions.entries import BranchSummary, ModelChange
from tests.branching.builders import entry, from_parents

sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))


def eid(i: int) -> str:
    return f"e{i:06d}"


@st.composite
def trees(draw):
    raw = draw(st.lists(st.integers(-3, 10**6), min_size=1, max_size=50))
    parents = [None if i == 0 or v < 0 else v % i for i, v in enumerate(raw)]
    roles = draw(
        st.lists(
            st.sampled_from(["user", "assistant"]), min_size=len(parents), max_size=len(parents)
        )
    )
    n = len(parents)
    labelled = draw(st.sets(st.integers(0, n - 1), max_size=4))
    leaf = draw(st.none() | st.integers(0, n - 1))
    seed = draw(st.integers(0, 2**16))
    entries = from_parents(parents, roles)
    shuffled = list(entries)
    random.Random(seed).shuffle(shuffled)
    labels = {eid(i): f"label {i}" for i in labelled}
    leaf_id = None if leaf is None else eid(leaf)
    return parents, roles, labels, leaf_id, SessionTree.from_entries(shuffled, labels, leaf_id)


class Model:
    def __init__(self, parents):
        self.parents = parents
        self.kids = {i: [] for i in range(len(parents))}
        self.roots = []
        for i, p in enumerate(parents):
            (self.roots if p is None else self.kids[p]).append(i)

    def path(self, i):
        out = []
        while i is not None:
            out.append(i)
            i = self.parents[i]
        return out[::-1]

    def siblings(self, i):
        p = self.parents[i]
        return self.roots if p is None else self.kids[p]


def ix(entry_id: str) -> int:
    return int(entry_id[1:])


@given(trees())
@settings(max_examples=150, deadline=None)
def test_structure_matches_the_model(case) -> None:
    parents, _roles, _labels, _leaf, tree = case
    model = Model(parents)
    assert len(tree) == len(parents)
    for i in range(len(parents)):
        path = tree.path_to(eid(i))
        assert [ix(p) for p in path] == model.path(i)
        assert tree.parent(path[0]) is None  # every path ends at a root
        assert tree.depth(eid(i)) == len(path) - 1
        assert [ix(c) for c in tree.children(eid(i))] == model.kids[i]  # creation order
        sibs = model.siblings(i)
        index, count = tree.siblings(eid(i))
        assert (index, count) == (sibs.index(i), len(sibs))
        nxt, prev = tree.next_sibling(eid(i)), tree.previous_sibling(eid(i))
        assert nxt == (eid(sibs[index + 1]) if index + 1 < count else None)
        assert prev == (eid(sibs[index - 1]) if index > 0 else None)
        if nxt is not None:
            assert tree.previous_sibling(nxt) == eid(i)
            assert tree.siblings(nxt) == (index + 1, count)
        leaf = tree.deepest_leaf(eid(i))
        assert tree.is_leaf(leaf) and not model.kids[ix(leaf)]
        assert eid(i) in tree.path_to(leaf)
        # newest child each step
        j = i
        while model.kids[j]:
            j = model.kids[j][-1]
        assert ix(leaf) == j


@given(trees(), st.data())
@settings(max_examples=150, deadline=None)
def test_common_ancestor_and_branch_entries(case, data) -> None:
    parents, _roles, _labels, _leaf, tree = case
    model = Model(parents)
    n = len(parents)
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(0, n - 1))
    pa, pb = model.path(a), model.path(b)
    common = [x for x, y in zip(pa, pb, strict=False) if x == y]
    expected = common[-1] if common else None
    got = tree.common_ancestor(eid(a), eid(b))
    assert (None if got is None else ix(got)) == expected
    branch = [ix(e.id) for e in tree.branch_entries(eid(a), eid(b))]
    assert branch == pa[len(common) :]
    assert shared_length(tree.path_entries(eid(a)), tree.path_entries(eid(b))) == len(common)


@given(trees(), st.data())
@settings(max_examples=150, deadline=None)
def test_path_entries_reuse_the_part_shared_with_a_known_path(case, data) -> None:
    parents, _roles, _labels, _leaf, tree = case
    model = Model(parents)
    n = len(parents)
    a = data.draw(st.none() | st.integers(0, n - 1))
    b = data.draw(st.none() | st.integers(0, n - 1))
    # copies: what comes from ``known`` is told apart from what the tree holds
    known = [replace(tree.entry(eid(i))) for i in (model.path(a) if a is not None else [])]
    path = tree.path_entries(None if b is None else eid(b), known)
    expected = model.path(b) if b is not None else []
    assert [ix(e.id) for e in path] == expected
    pairs = zip([ix(e.id) for e in known], expected, strict=False)
    shared = next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(known), len(path)))
    assert all(path[i] is known[i] for i in range(shared))
    assert all(path[i] is tree.entry(path[i].id) for i in range(shared, len(path)))
    assert tree.path_entries(None if b is None else eid(b)) == path


@given(trees())
@settings(max_examples=150, deadline=None)
def test_unfolded_rows_hold_every_entry_once_in_preorder(case) -> None:
    parents, _roles, labels, leaf, tree = case
    rows = tree.rows(fold_linear=False)
    ids = [r.entry_id for r in rows]
    assert sorted(ids) == [eid(i) for i in range(len(parents))]
    seen: set[str] = set()
    current = set(tree.path_to(leaf))
    for row in rows:
        parent = tree.parent(row.entry_id)
        assert parent is None or parent in seen
        seen.add(row.entry_id)
        assert row.on_current_path == (row.entry_id in current)
        assert row.label == labels.get(row.entry_id)
        assert row.is_leaf == (row.entry_id == leaf)
        assert row.prefix.endswith(("├─ ", "└─ ")) or row.prefix.strip(" │") == ""


@given(trees(), st.integers(1, 4))
@settings(max_examples=150, deadline=None)
def test_folding_hides_nothing_it_must_show(case, fold_min) -> None:
    parents, _roles, labels, leaf, tree = case
    rows = tree.rows(fold_min=fold_min)
    shown = {r.entry_id for r in rows if not r.is_fold}
    if leaf is not None:
        assert leaf in shown
    assert set(labels) <= shown
    assert len(shown) + sum(r.folded for r in rows if r.is_fold) == len(parents)
    for row in rows:
        if row.is_fold:
            assert row.folded >= fold_min
            # expanding that fold shows all its entries
            opened = {
                r.entry_id
                for r in tree.rows(fold_min=fold_min, expanded={row.entry_id})
                if not r.is_fold
            }
            assert row.entry_id in opened and len(opened) == len(shown) + row.folded


@given(trees(), st.sampled_from(["1", "2", "user", "number 1", "LABEL"]))
@settings(max_examples=100, deadline=None)
def test_filters_and_query(case, query) -> None:
    parents, roles, labels, _leaf, tree = case
    n = len(parents)
    user = [r.entry_id for r in tree.rows("user")]
    assert sorted(user) == [eid(i) for i in range(n) if roles[i] == "user"]
    assert sorted(r.entry_id for r in tree.rows("labelled")) == sorted(labels)
    found = sorted(r.entry_id for r in tree.rows(query=query))
    expected = sorted(
        eid(i)
        for i in range(n)
        if query.casefold() in f"{roles[i]} message number {i}"
        or query.casefold() in labels.get(eid(i), "").casefold()
    )
    assert found == expected


def test_a_10000_deep_chain_needs_no_recursion() -> None:
    parents = [None] + list(range(9_999))
    tree = SessionTree.from_entries(from_parents(parents), {eid(5_000): "middle"}, eid(9_999))
    assert len(tree.path_to(eid(9_999))) == 10_000
    assert tree.deepest_leaf(eid(0)) == eid(9_999)
    rows = tree.rows()
    assert [r.entry_id for r in rows if not r.is_fold] == [eid(0), eid(5_000), eid(9_999)]
    assert sum(r.folded for r in rows) == 9_997
    assert len(tree.rows(fold_linear=False)) == 10_000
    assert [e.id for e in tree.branch_entries(eid(9_999), eid(9_990))] == [
        eid(i) for i in range(9_991, 10_000)
    ]


def test_rows_draw_connectors() -> None:
    #  0 - 1 -+- 2 - 3
    #         +- 4 - 5
    tree = SessionTree.from_entries(from_parents([None, 0, 1, 2, 1, 4]), {eid(3): "kept"}, eid(5))
    lines = [(r.prefix, r.entry_id, r.on_current_path, r.label) for r in tree.rows()]
    assert lines == [
        ("", eid(0), True, None),
        ("", eid(1), True, None),
        ("├─ ", eid(2), False, None),
        ("│  ", eid(3), False, "kept"),
        ("└─ ", eid(4), True, None),
        ("   ", eid(5), True, None),
    ]
    assert [r.indent for r in tree.rows()] == [0, 0, 1, 1, 1, 1]


def test_previews_are_one_sanitized_line() -> None:
    e = entry(0, None, "\n\n  \x1b[31mred\x1b[0m [bold]text[/bold]\nsecond line" + "x" * 200)
    tree = SessionTree.from_entries([e], {}, e.id)
    assert tree.rows()[0].preview == "red [bold]text[/bold]"
    long = entry(1, None, "y" * 500)
    preview = SessionTree.from_entries([long]).rows()[0].preview
    assert len(preview) == 80 and preview.endswith("…")


def test_orphans_are_roots_and_unknown_labels_and_leaf_are_ignored() -> None:
    orphan = entry(1, "missing-parent")
    tree = SessionTree.from_entries([entry(0, None), orphan], {"nope": "x"}, "nope")
    assert list(tree.roots()) == [eid(0), eid(1)]
    assert tree.siblings(eid(1)) == (1, 2)
    assert tree.labels == {} and tree.leaf_id is None


def with_kinds(entries, kinds):
    """``entries`` with entry i turned into a model change or branch summary where ``kinds[i]`` says so."""
    out = []
    for e, kind in zip(entries, kinds, strict=False):
        if kind == "model_change":
            e = replace(e, type="model_change", payload=ModelChange(model="m"))
        elif kind == "branch_summary":
            e = replace(e, type="branch_summary", payload=BranchSummary(from_id=None, summary="s"))
        out.append(e)
    return out


@given(trees(), st.data())
@settings(max_examples=150, deadline=None)
def test_alternatives_look_through_bookkeeping_entries(case, data) -> None:
    parents, roles, labels, leaf, _tree = case
    n = len(parents)
    kinds = data.draw(
        st.lists(
            st.sampled_from(["message", "message", "model_change", "branch_summary"]),
            min_size=n,
            max_size=n,
        )
    )
    tree = SessionTree.from_entries(with_kinds(from_parents(parents, roles), kinds), labels, leaf)
    transparent = {i for i, k in enumerate(kinds) if k != "message"}

    def anchor(i):
        p = parents[i]
        while p is not None and p in transparent:
            p = parents[p]
        return p

    for i in range(n):
        got = [ix(a) for a in tree.alternatives(eid(i))]
        if i in transparent:
            assert got == [i]
            continue
        # every non-transparent entry whose nearest non-transparent ancestor is the same
        expected = [j for j in range(n) if j not in transparent and anchor(j) == anchor(i)]
        assert got == expected  # ids follow creation order
        assert i in got
        assert all(tree.is_leaf(tree.deepest_leaf(eid(j))) for j in got)


@given(trees(), st.data())
@settings(max_examples=150, deadline=None)
def test_adding_entries_one_by_one_matches_building_at_once(case, data) -> None:
    parents, roles, labels, leaf, whole = case
    entries = from_parents(parents, roles)
    start = data.draw(st.integers(1, len(entries)))
    grown = SessionTree.from_entries(entries[:start], labels, None)
    grown.leaf_count()  # counted before the adds: they keep the count
    for late in entries[start:]:  # written later, parents first
        grown.add(late)
    grown.move_leaf(leaf)
    for label_id, text in labels.items():
        grown.set_label(label_id, text)
    assert grown.rows(fold_linear=False) == whole.rows(fold_linear=False)
    for i in range(len(parents)):
        assert grown.siblings(eid(i)) == whole.siblings(eid(i))
        assert grown.depth(eid(i)) == whole.depth(eid(i))
    childless = sum(1 for i in range(len(parents)) if i not in parents)
    assert grown.leaf_count() == whole.leaf_count() == childless


def test_add_path_indexes_only_new_entries_and_moves_the_leaf() -> None:
    entries = from_parents([None, 0, 1, 2, 1])
    tree = SessionTree.from_entries(entries[:3], {}, eid(2))
    assert tree.current_path == {eid(0), eid(1), eid(2)}
    tree.add_path([entries[0], entries[1], entries[4]])
    assert tree.leaf_id == eid(4) and tree.current_path == {eid(0), eid(1), eid(4)}
    assert tree.children(eid(1)) == [eid(2), eid(4)]
    tree.add(entries[3])
    assert tree.deepest_leaf(eid(2)) == eid(3)
    tree.set_label(eid(3), "x")
    tree.set_label(eid(3), None)
    assert tree.labels == {}


def test_previews_read_as_text_not_markdown_markup() -> None:
    """Issue 33 item 10: tree rows showed ``## Demo reply 1`` and ``**Day 1**``."""
    cases = {
        "## Demo reply 1\n\nYou said": "Demo reply 1",
        "**Day 1**: the `castle` and __old town__": "Day 1: the castle and old town",
        "> quoted *gently*": "quoted gently",
        "- first item": "first item",
        "2 * 3 = 6, a_b_c stays": "2 * 3 = 6, a_b_c stays",
        "```python\nprint(1)\n```": "print(1)",
    }
    for i, (text, shown) in enumerate(cases.items()):
        e = entry(i, None, text)
        assert SessionTree.from_entries([e]).rows()[0].preview == shown, text
