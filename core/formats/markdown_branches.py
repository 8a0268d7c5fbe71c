"""Markdown export of every branch (``sessions export --format markdown --all-branches``).

The current branch comes first, exactly as :func:`core.formats.markdown.to_markdown`
writes it. Then every other branch of the tree, one section per leaf (oldest
first): the entries after the point where it leaves the branches already
written, under a heading that says where it starts. So the replies of a
``/compare`` show as the answer on the current branch, then each other
model's answer as an alternative.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.branching.tree import SessionTree, preview_text
from core.sessions.entries import Entry
from core.sessions.persistence import SessionInfo

_HEADER_LINES = 4
"""``to_markdown`` starts with the title, a blank line, the session line and a blank line."""


def to_markdown_all_branches(info: SessionInfo, path: Sequence[Entry], tree: SessionTree) -> str:
    from core.formats.markdown import to_markdown

    text = to_markdown(info, path)
    written = {e.id for e in path}
    leaves = [i for i in _leaves(tree) if i not in written]
    for number, leaf in enumerate(leaves, 2):
        ids = tree.path_to(leaf)
        start = next(index for index, i in enumerate(ids) if i not in written)
        branch = [tree.entry(i) for i in ids[start:]]
        written.update(ids[start:])
        where = (
            f"after “{preview_text(tree.entry(ids[start - 1]), 60)}”" if start else "from the start"
        )
        label = tree.labels.get(branch[0].id)
        title = f"# Alternative branch {number}, {where}" + (f" [{label}]" if label else "")
        body = to_markdown(info, branch).split("\n", _HEADER_LINES)[_HEADER_LINES]
        text += f"\n---\n\n{title}\n\n{body}"
    return text


def _leaves(tree: SessionTree) -> list[str]:
    """Every leaf, in the order the tree was written (oldest first)."""
    found: list[str] = []
    stack = list(reversed(tree.roots()))
    while stack:
        current = stack.pop()
        children = tree.children(current)
        if not children:
            found.append(current)
        stack.extend(reversed(children))
    return found
