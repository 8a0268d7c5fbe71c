"""What the compare screen shows: 2-4 columns, each an alternative or a branch.

Pure functions over a :class:`~core.branching.tree.SessionTree`. Two ways to build one:

- :func:`of_alternatives`: the alternatives of one message (replies to the
  same question, edits of the same question), each with its newest branch
  below it (:meth:`~core.branching.tree.SessionTree.deepest_leaf`), as ◀ ▶ shows them.
- :func:`of_branches`: two marked entries; each column holds the entries
  from where the two paths part down to the entry's newest leaf.

A column's :class:`ColumnStats` come from what its assistant messages store:
model, usage (tokens, cost), and the timings a fan-out writes into
``meta["timing"]`` (time to first token, total); the thinking level from the
model change in force on the column's path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.branching.tree import TRANSPARENT, SessionTree, preview_text
from core.sessions.entries import Entry, ModelChange
from core.sessions.messages import Message
from core.usage import total_usage

MAX_COLUMNS = 4
TIMING_KEY = "timing"
"""``message.meta[TIMING_KEY] = {"ttft": seconds, "total": seconds}``."""


ENDINGS = {
    "aborted": "stopped",
    "error": "failed",
    "interrupted": "cut off",
    "length": "max tokens",
}
"""What a column's figures say of a reply that did not finish, by its stop reason."""


class ComparisonError(ValueError):
    """Nothing to compare (one alternative only, the same entry twice, ...)."""


@dataclass(frozen=True)
class ColumnStats:
    model: str | None
    thinking: str
    tokens: int
    """Output tokens of the column's replies."""
    cost: float
    ttft: float | None
    """Seconds to the first token of its first reply; None when not measured."""
    seconds: float | None
    """Seconds its replies took; None when not measured."""
    error: str | None = None
    ended: str | None = None
    """How its last reply ended when not by finishing (``stopped``, ``failed``,
    ``cut off``, ``max tokens``); None when it finished."""

    @property
    def title(self) -> str:
        """The model, with its thinking level when not off."""
        model = self.model or "?"
        return model if self.thinking == "off" else f"{model} ({self.thinking})"

    @property
    def figures(self) -> str:
        """``tokens · cost · seconds`` (the seconds only when measured)."""
        parts = [f"{self.tokens:,} tok", f"${self.cost:.4f}" if self.cost else "$0"]
        if self.seconds is not None:
            parts.append(f"{self.seconds:.1f}s")
        if self.ended is not None:
            parts.append(self.ended)
        return " · ".join(parts)

    def header(self) -> str:
        """``model · tokens · cost · seconds``."""
        return f"{self.title} · {self.figures}"


@dataclass(frozen=True)
class Column:
    """One side of a comparison."""

    entry_id: str
    """The alternative (or marked entry) the column stands for."""
    entries: tuple[Entry, ...]
    """What the column shows, oldest first: the alternative and its branch below."""
    leaf_id: str
    """Where the position goes when this column is kept."""
    stats: ColumnStats

    @property
    def text(self) -> str:
        return column_text(self.entries)


@dataclass(frozen=True)
class Comparison:
    columns: tuple[Column, ...]
    anchor_id: str | None
    """The entry the columns part from (their common parent, or common ancestor)."""
    current: int = 0
    """The column on the current path (or the one asked about)."""


def timing(message: Message) -> tuple[float | None, float | None]:
    """``(ttft, total)`` seconds stored on a reply, or Nones."""
    stored = message.meta.get(TIMING_KEY)
    if not isinstance(stored, dict):
        return None, None

    def seconds(key: str) -> float | None:
        value = stored.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    return seconds("ttft"), seconds("total")


def column_text(entries: Sequence[Entry]) -> str:
    """A column's messages as one text (what is shown and what the word diff
    compares). With more than one message (a whole branch), each starts with a
    line naming its role."""
    messages = [e.message for e in entries if e.message is not None and e.message.role != "system"]
    if len(messages) == 1:
        return messages[0].text
    return "\n\n".join(f"── {m.role.replace('_', ' ')} ──\n{m.text}" for m in messages)


def column_stats(entries: Sequence[Entry], thinking: str = "off") -> ColumnStats:
    """Stats of a column: the model of its first reply, the output tokens and
    cost of all its replies, their time; ``thinking`` is the level in force."""
    replies = [
        e.message for e in entries if e.message is not None and e.message.role == "assistant"
    ]
    usage = total_usage(entries)
    first = replies[0] if replies else None
    ttft, _ = timing(first) if first is not None else (None, None)
    totals = [timing(m)[1] for m in replies]
    seconds = (
        sum(t for t in totals if t is not None) if any(t is not None for t in totals) else None
    )
    errors = [m.error for m in replies if m.error]
    last = replies[-1].stop_reason if replies else None
    return ColumnStats(
        model=first.model if first is not None else None,
        thinking=thinking,
        tokens=usage.output_tokens,
        cost=usage.cost,
        ttft=ttft,
        seconds=seconds,
        error=errors[0] if errors else None,
        ended=ENDINGS.get(last or "stop"),
    )


def _thinking_at(tree: SessionTree, entry_id: str) -> str:
    """The thinking level of the newest model change at or above ``entry_id``."""
    current: str | None = entry_id
    while current is not None:
        payload = tree.entry(current).payload
        if isinstance(payload, ModelChange):
            return payload.thinking
        current = tree.parent(current)
    return "off"


def _column(tree: SessionTree, start: str, tip: str) -> Column:
    """The entries from ``start`` down through ``tip`` to ``tip``'s newest leaf."""
    leaf = tree.deepest_leaf(tip)
    ids = tree.path_to(leaf)
    entries = tuple(tree.entry(i) for i in ids[ids.index(start) :])
    shown = tuple(e for e in entries if e.message is not None)
    stats = column_stats(entries, _thinking_at(tree, start))
    return Column(entry_id=tip, entries=shown, leaf_id=leaf, stats=stats)


def of_alternatives(
    tree: SessionTree, entry_id: str, current_leaf: str | None = None
) -> Comparison:
    """The alternatives of ``entry_id``'s message, oldest first, at most
    :data:`MAX_COLUMNS`: the one on the current path (else ``entry_id``) and
    the newest others."""
    alternatives = tree.alternatives(entry_id)
    if len(alternatives) < 2:
        raise ComparisonError("this message has no alternatives to compare")
    on_path = set(tree.path_to(current_leaf)) if current_leaf else set()
    keep = next((a for a in alternatives if a in on_path), entry_id)
    others = [a for a in alternatives if a != keep][-(MAX_COLUMNS - 1) :]
    chosen = sorted([keep, *others], key=alternatives.index)
    anchor = tree.parent(alternatives[0])
    while anchor is not None and tree.entry(anchor).type in TRANSPARENT:
        anchor = tree.parent(anchor)
    columns = tuple(_column(tree, a, a) for a in chosen)
    return Comparison(columns, anchor, chosen.index(keep))


def anchor_text(tree: SessionTree, anchor_id: str | None) -> str:
    """One line saying where the columns part: the question they answer, or
    the message their branches follow."""
    if anchor_id is None:
        return "from the start"
    message = tree.entry(anchor_id).message
    if message is not None and message.role == "user":
        return preview_text(tree.entry(anchor_id), 200)
    return f"after “{preview_text(tree.entry(anchor_id), 80)}”"


def of_branches(tree: SessionTree, first: str, second: str) -> Comparison:
    """Two marked entries: each column runs from where their paths part down
    to the marked entry's newest leaf."""
    if first == second:
        raise ComparisonError("mark two different entries to compare")
    ancestor = tree.common_ancestor(first, second)
    if ancestor in (first, second):
        raise ComparisonError("one marked entry is on the other's path: mark two branches")
    columns = []
    for marked in (first, second):
        path = tree.path_to(marked)
        start = path[path.index(ancestor) + 1] if ancestor is not None else path[0]
        columns.append(_column(tree, start, marked))
    return Comparison(tuple(columns), ancestor)
