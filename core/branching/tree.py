"""A session's whole tree, indexed in memory: a pure structure, no I/O.

Built once from every entry of a session (``store.entries(session_id)``), its
labels and its leaf. Everything here is O(n) or better and iterative (a chain
can be 10,000 entries deep), so the tree screen and sibling switching stay
cheap on big sessions.

Display rows (:meth:`SessionTree.rows`) are pre-order, children oldest first.
A child of a branch point gets a connector (``├─ `` / ``└─ ``) and one more
level of indent; an only child stays at its parent's indent::

    user: hello
    assistant: hi
    ├─ user: question A
    │  assistant: answer A
    └─ user: question B
       assistant: answer B
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from core.sanitize import strip_control
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, Note

RowFilter = Literal["all", "user", "labelled"]
ROW_FILTERS: tuple[RowFilter, ...] = ("all", "user", "labelled")

PREVIEW_CHARS = 80
FOLD_MIN = 6
"""Runs of at least this many foldable entries collapse into one row."""
MAX_GUIDE_LEVELS = 12
"""Connector columns kept on deeply nested branches (the leftmost are dropped)."""

TRANSPARENT = frozenset({"model_change", "branch_summary", "note"})
"""Entry types the app writes in front of a message: alternatives are looked for through them."""

_BRANCH_MID, _BRANCH_LAST = "├─ ", "└─ "
_GUIDE_MID, _GUIDE_LAST = "│  ", "   "
_MAX_GUIDE = 3 * MAX_GUIDE_LEVELS


@dataclass(frozen=True)
class TreeRow:
    """One line of the tree screen."""

    entry_id: str
    """The entry; for a fold row, the first hidden entry (its fold key)."""
    depth: int
    """Distance from the root (a root is 0)."""
    indent: int
    """Branch levels above this entry (how far the row is indented)."""
    prefix: str
    """Connector columns, e.g. ``"│  ├─ "``."""
    preview: str
    """One sanitized line (empty for a fold row)."""
    kind: str
    """A message's role (``user``, ``assistant``, ...), an entry type, or ``"fold"``."""
    label: str | None = None
    on_current_path: bool = False
    is_leaf: bool = False
    """The session's current leaf."""
    folded: int = 0
    """For a fold row: how many entries it stands for."""

    @property
    def is_fold(self) -> bool:
        return self.kind == "fold"


def _shown_label(label: str | None) -> str | None:
    """A label on one line, safe for the terminal (labels come from imports too)."""
    return " ".join(strip_control(label).split()) if label else label


def preview_text(entry: Entry, limit: int = PREVIEW_CHARS) -> str:
    """One safe line describing an entry: its first non-empty line, shortened
    (what kind of entry it is, the tree screen shows beside it)."""
    payload = entry.payload
    if isinstance(payload, (Compaction, BranchSummary)):
        text = payload.summary
    elif isinstance(payload, ModelChange):
        text = payload.model + (
            f" (thinking {payload.thinking})" if payload.thinking != "off" else ""
        )
    elif isinstance(payload, Note):
        text = f"note at depth {payload.depth}: {payload.text}" if payload.active else "note off"
    else:
        text = payload.text
        if not text.strip():
            calls = payload.tool_calls
            if calls:
                text = "→ " + ", ".join(call.name for call in calls)
            elif payload.images:
                text = "[image]"
            elif payload.thinking:
                text = "[thinking]"
    return _first_line(text[: 4 * limit + 400] if len(text) > 4 * limit + 400 else text, limit)


_FENCE = re.compile(r"^(```|~~~)")
_LINE_MARKS = re.compile(r"^(?:#{1,6}\s+|>\s*|[-*+]\s+)+")
_EMPHASIS = re.compile(
    r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])|`([^`]+)`"
)


def _markdown_plain(line: str) -> str:
    """A Markdown line as it reads: no heading or quote marks, no bullet, no
    emphasis or code marks (a row shows ``Day 1``, not ``**Day 1**``)."""
    line = _LINE_MARKS.sub("", line)
    return _EMPHASIS.sub(lambda m: m.group(2) or m.group(3) or m.group(4), line)


def _first_line(text: str, limit: int) -> str:
    text = strip_control(text)
    line = ""
    for candidate in text.split("\n"):
        if _FENCE.match(candidate.lstrip()):
            continue
        candidate = _markdown_plain(" ".join(candidate.split()))
        if candidate:
            line = candidate
            break
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return line


def _kind(entry: Entry) -> str:
    message = entry.message
    return message.role if message is not None else entry.type


def _search_text(entry: Entry) -> str:
    payload = entry.payload
    if isinstance(payload, (Compaction, BranchSummary)):
        text = payload.summary
    elif isinstance(payload, ModelChange):
        text = payload.model
    elif isinstance(payload, Note):
        text = payload.text
    else:
        text = payload.text + " " + " ".join(call.name for call in payload.tool_calls)
    return strip_control(text).casefold()


def _in_creation_order(entries: Sequence[Entry]) -> bool:
    previous = None
    for entry in entries:
        if previous is not None:
            if entry.created_at < previous.created_at or (
                entry.created_at == previous.created_at and entry.id < previous.id
            ):
                return False
        previous = entry
    return True


def shared_length(a: Sequence[Entry], b: Sequence[Entry]) -> int:
    """How many leading entries two paths from the root have in common: being
    paths of one tree, they agree up to the first that differs (a bisection)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] is b[mid] or a[mid] == b[mid]:
            lo = mid + 1
        else:
            hi = mid
    return lo


class SessionTree:
    """Index of one session's entries: children, parents, depths, sibling positions."""

    def __init__(
        self,
        entries: dict[str, Entry],
        children: dict[str | None, list[str]],
        depth: dict[str, int],
        position: dict[str, int],
        labels: dict[str, str],
        leaf_id: str | None,
    ) -> None:
        self._entries = entries
        self._children = children
        self._depth = depth
        self._position = position
        self.labels = labels
        self.leaf_id = leaf_id
        self._previews: dict[str, str] = {}
        self._search: dict[str, str] = {}
        self._current: set[str] | None = None
        self._leaves: int | None = None
        """Entries without children, once counted (kept in step by :meth:`add`)."""

    @classmethod
    def from_entries(
        cls,
        entries: Iterable[Entry],
        labels: Mapping[str, str] | None = None,
        leaf_id: str | None = None,
    ) -> SessionTree:
        """Index ``entries`` (any order). An entry whose parent is missing counts as a root.
        ``labels`` for unknown entries are ignored; so is an unknown ``leaf_id``."""
        ordered = entries if isinstance(entries, list) else list(entries)
        if not _in_creation_order(ordered):  # the store's order needs no sort
            ordered = sorted(ordered, key=lambda e: (e.created_at, e.id))
        by_id: dict[str, Entry] = {}
        for entry in ordered:
            by_id[entry.id] = entry
        children: dict[str | None, list[str]] = {None: []}
        for entry in ordered:
            parent = (
                entry.parent_id
                if entry.parent_id in by_id and entry.parent_id != entry.id
                else None
            )
            children.setdefault(parent, []).append(entry.id)
        position: dict[str, int] = {}
        for ids in children.values():
            for index, entry_id in enumerate(ids):
                position[entry_id] = index
        # Depths from the roots down (iterative). Entries on a parent cycle are
        # unreachable from any root: they are dropped.
        depth: dict[str, int] = {}
        stack = [(root, 0) for root in children[None]]
        while stack:
            entry_id, level = stack.pop()
            depth[entry_id] = level
            for child in children.get(entry_id, ()):
                stack.append((child, level + 1))
        if len(depth) != len(by_id):
            by_id = {k: v for k, v in by_id.items() if k in depth}
            children = {
                k: [c for c in v if c in depth]
                for k, v in children.items()
                if k is None or k in depth
            }
        return cls(
            by_id,
            children,
            depth,
            position,
            {k: v for k, v in (labels or {}).items() if k in by_id and v},
            leaf_id if leaf_id in by_id else None,
        )

    # --- reading ---------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    def entry(self, entry_id: str) -> Entry:
        return self._entries[entry_id]

    def parent(self, entry_id: str) -> str | None:
        parent = self._entries[entry_id].parent_id
        return parent if parent in self._entries else None

    def children(self, entry_id: str | None) -> Sequence[str]:
        """Child ids oldest first (``None``: the roots)."""
        return self._children.get(entry_id, ())

    def roots(self) -> Sequence[str]:
        return self._children[None]

    def depth(self, entry_id: str) -> int:
        return self._depth[entry_id]

    def is_leaf(self, entry_id: str) -> bool:
        return not self._children.get(entry_id)

    def leaf_count(self) -> int:
        """How many branches the session has: entries without children."""
        if self._leaves is None:
            self._leaves = sum(1 for entry_id in self._entries if not self._children.get(entry_id))
        return self._leaves

    def path_to(self, entry_id: str | None) -> list[str]:
        """Ids from the root down to ``entry_id`` (inclusive); [] for None."""
        path: list[str] = []
        current = entry_id
        while current is not None:
            path.append(current)
            current = self.parent(current)
        path.reverse()
        return path

    def path_entries(self, entry_id: str | None, known: Sequence[Entry] = ()) -> list[Entry]:
        """The entries from the root down to ``entry_id`` (inclusive); [] for None.
        The part shared with ``known`` (another path from a root, e.g. the current
        one) is taken from it: the cost is the entries below the common ancestor."""
        below: list[Entry] = []
        current = entry_id
        while current is not None:
            depth = self._depth[current]
            if depth < len(known) and known[depth].id == current:
                return [*known[: depth + 1], *reversed(below)]
            below.append(self._entries[current])
            current = self.parent(current)
        below.reverse()
        return below

    @property
    def current_path(self) -> set[str]:
        if self._current is None:
            self._current = set(self.path_to(self.leaf_id))
        return self._current

    def siblings(self, entry_id: str) -> tuple[int, int]:
        """``(index, count)`` of the entry among its parent's children, oldest
        first; ``index`` is 0-based (show ``index + 1``/``count``)."""
        parent = self.parent(entry_id)
        return self._position[entry_id], len(self._children[parent])

    def next_sibling(self, entry_id: str) -> str | None:
        ids = self._children[self.parent(entry_id)]
        index = self._position[entry_id] + 1
        return ids[index] if index < len(ids) else None

    def previous_sibling(self, entry_id: str) -> str | None:
        ids = self._children[self.parent(entry_id)]
        index = self._position[entry_id] - 1
        return ids[index] if index >= 0 else None

    def deepest_leaf(self, entry_id: str) -> str:
        """The leaf reached from ``entry_id`` by following the newest child each step."""
        current = entry_id
        while True:
            kids = self._children.get(current)
            if not kids:
                return current
            current = kids[-1]

    def common_ancestor(self, a: str | None, b: str | None) -> str | None:
        """The deepest entry on both paths (an entry is its own ancestor); None if none."""
        if a is None or b is None:
            return None
        da, db = self._depth[a], self._depth[b]
        while da > db:
            a, da = self.parent(a), da - 1  # type: ignore[arg-type]  # a has a parent: da > 0
        while db > da:
            b, db = self.parent(b), db - 1  # type: ignore[arg-type]  # b has a parent: db > 0
        while a != b:
            a, b = self.parent(a), self.parent(b)  # type: ignore[arg-type]  # None ends the loop
            if a is None or b is None:
                return None
        return a

    def branch_entries(self, from_leaf: str | None, to_entry: str | None) -> list[Entry]:
        """The entries left behind when moving from ``from_leaf`` to ``to_entry``:
        those on the old path after the common ancestor (oldest first)."""
        if from_leaf is None:
            return []
        ancestor = self.common_ancestor(from_leaf, to_entry)
        stop = self._depth[ancestor] if ancestor is not None else -1
        found: list[Entry] = []
        current: str | None = from_leaf
        while current is not None and self._depth[current] > stop:
            found.append(self._entries[current])
            current = self.parent(current)
        found.reverse()
        return found

    def preview(self, entry_id: str) -> str:
        cached = self._previews.get(entry_id)
        if cached is None:
            cached = self._previews[entry_id] = preview_text(self._entries[entry_id])
        return cached

    def matches(self, entry_id: str, query: str) -> bool:
        """Case-insensitive substring match on the entry's text or label."""
        needle = query.casefold()
        text = self._search.get(entry_id)
        if text is None:
            text = self._search[entry_id] = _search_text(self._entries[entry_id])
        return needle in text or needle in self.labels.get(entry_id, "").casefold()

    def alternatives(self, entry_id: str) -> list[str]:
        """The messages that answer the same point as ``entry_id``, oldest first.

        Like :meth:`siblings`, but looking through the bookkeeping entries the
        app writes in front of a message (:data:`TRANSPARENT`: a model change
        before a regenerated reply, a branch summary before an edited message),
        so an edit or a regeneration counts as an alternative even then. A
        transparent entry is its own only alternative.
        """
        if self._entries[entry_id].type in TRANSPARENT:
            return [entry_id]
        anchor = self.parent(entry_id)
        while anchor is not None and self._entries[anchor].type in TRANSPARENT:
            anchor = self.parent(anchor)
        found: list[str] = []
        stack = list(reversed(self.children(anchor)))
        while stack:
            current = stack.pop()
            if self._entries[current].type in TRANSPARENT:
                stack.extend(reversed(self.children(current)))
            else:
                found.append(current)
        found.sort(key=lambda i: (self._entries[i].created_at, i))
        return found

    # --- changes (kept in step with the store, so nothing is re-read) -----

    def add(self, entry: Entry) -> None:
        """Index an entry written after the tree was built (its parent, if any, known)."""
        if entry.id in self._entries:
            return
        parent = entry.parent_id if entry.parent_id in self._entries else None
        if self._leaves is not None and (parent is None or self._children.get(parent)):
            self._leaves += 1  # else the parent stops being a leaf as this one becomes one
        self._entries[entry.id] = entry
        self._depth[entry.id] = 0 if parent is None else self._depth[parent] + 1
        kids = self._children.setdefault(parent, [])
        key = (entry.created_at, entry.id)
        if kids and (self._entries[kids[-1]].created_at, kids[-1]) > key:
            kids.append(entry.id)
            kids.sort(key=lambda i: (self._entries[i].created_at, i))
            for index, kid in enumerate(kids):
                self._position[kid] = index
        else:
            self._position[entry.id] = len(kids)
            kids.append(entry.id)

    def add_path(self, path: Sequence[Entry]) -> None:
        """Index the entries of ``path`` (root first) the tree does not hold yet
        and make its end the leaf: costs only the new entries."""
        start = len(path)
        while start > 0 and path[start - 1].id not in self._entries:
            start -= 1
        for entry in path[start:]:
            self.add(entry)
        self.move_leaf(path[-1].id if path else None)

    def move_leaf(self, leaf_id: str | None) -> None:
        if leaf_id != self.leaf_id:
            self.leaf_id = leaf_id if leaf_id in self._entries else None
            self._current = None

    def set_label(self, entry_id: str, label: str | None) -> None:
        if label:
            self.labels[entry_id] = label
        else:
            self.labels.pop(entry_id, None)

    # --- display rows ----------------------------------------------------

    def rows(
        self,
        filter: RowFilter = "all",
        query: str = "",
        fold_linear: bool = True,
        expanded: Iterable[str] = (),
        fold_min: int = FOLD_MIN,
    ) -> list[TreeRow]:
        """Flattened display rows, pre-order.

        ``filter``: every entry, user messages only, or labelled entries only;
        ``query`` keeps entries whose text or label contains it. With a filter
        or a query there is no folding. Otherwise, with ``fold_linear``, runs of
        at least ``fold_min`` entries inside a linear chain (each the only child
        of the one before, not the chain's first or last) become one fold row,
        except entries that are the current leaf or labelled; ``expanded`` holds
        fold keys (:attr:`TreeRow.entry_id` of a fold row) to show unfolded.
        """
        if filter not in ROW_FILTERS:
            raise ValueError(f"unknown filter: {filter!r}")
        query = query.strip()
        filtering = filter != "all" or bool(query)
        fold = fold_linear and not filtering and fold_min > 0
        open_folds = set(expanded)
        open_run: set[str] = set()
        entries, children, labels, current = (
            self._entries,
            self._children,
            self.labels,
            self.current_path,
        )
        leaf = self.leaf_id
        rows: list[TreeRow] = []
        roots = children[None]
        # Stack items: (entry id, own prefix, guide for its children, indent).
        stack: list[tuple[str, str, str, int]] = []
        self._push_children(stack, roots, "", 0)
        while stack:
            entry_id, prefix, guide, indent = stack.pop()
            if (
                fold
                and entry_id in open_folds
                and entry_id not in open_run
                and self._foldable(entry_id)
            ):
                # an expanded fold: its whole run stays open
                nxt = entry_id
                while self._foldable(nxt):
                    open_run.add(nxt)
                    nxt = children[nxt][0]
            if fold and entry_id not in open_run and self._foldable(entry_id):
                _run_end, count = entry_id, 1
                nxt = children[entry_id][0]
                while self._foldable(nxt):
                    _run_end, count = nxt, count + 1
                    nxt = children[nxt][0]
                if count >= fold_min:
                    rows.append(
                        TreeRow(
                            entry_id=entry_id,
                            depth=self._depth[entry_id],
                            indent=indent,
                            prefix=prefix,
                            preview="",
                            kind="fold",
                            on_current_path=entry_id in current,
                            folded=count,
                        )
                    )
                    stack.append((nxt, guide, guide, indent))
                    continue
            kids = children.get(entry_id, ())
            if filtering:
                keep = True
                if filter == "user":
                    message = entries[entry_id].message
                    keep = message is not None and message.role == "user"
                elif filter == "labelled":
                    keep = entry_id in labels
                if keep and query:
                    keep = self.matches(entry_id, query)
            else:
                keep = True
            if keep:
                rows.append(
                    TreeRow(
                        entry_id=entry_id,
                        depth=self._depth[entry_id],
                        indent=indent,
                        prefix=prefix,
                        preview=self.preview(entry_id),
                        kind=_kind(entries[entry_id]),
                        label=_shown_label(labels.get(entry_id)),
                        on_current_path=entry_id in current,
                        is_leaf=entry_id == leaf,
                    )
                )
            if len(kids) == 1:
                stack.append((kids[0], guide, guide, indent))
            elif kids:
                self._push_children(stack, kids, guide, indent)
        return rows

    def _foldable(self, entry_id: str) -> bool:
        """Inside a linear chain (an only child, not a root, with exactly one child), not pinned."""
        kids = self._children.get(entry_id)
        if kids is None or len(kids) != 1:
            return False
        parent = self.parent(entry_id)
        if parent is None or len(self._children[parent]) != 1:
            return False
        return entry_id != self.leaf_id and entry_id not in self.labels

    @staticmethod
    def _push_children(stack: list, kids: Sequence[str], guide: str, indent: int) -> None:
        if len(kids) == 1:
            stack.append((kids[0], guide, guide, indent))
            return
        last = len(kids) - 1
        # Pushed newest first so the oldest pops first.
        for index in range(last, -1, -1):
            is_last = index == last
            child_guide = guide + (_GUIDE_LAST if is_last else _GUIDE_MID)
            if len(child_guide) > _MAX_GUIDE:
                child_guide = child_guide[-_MAX_GUIDE:]
            stack.append(
                (
                    kids[index],
                    guide + (_BRANCH_LAST if is_last else _BRANCH_MID),
                    child_guide,
                    indent + 1,
                )
            )
