"""Pure helpers of a sync: register keys, parent-first order, image hashes."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable
from typing import Any

from core.sessions.entries import Entry


def key(*parts: str) -> str:
    """A register's key in the sync base: ``title SID``, ``label SID EID``..."""
    return " ".join(parts)


def encode(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def parent_first(
    entries: Iterable[Entry], present: Collection[str], blocked: Collection[str] = ()
) -> list[Entry]:
    """The entries that can be inserted now, each after its parent: those whose
    parent is ``present`` or taken before them, and not ``blocked`` (ids). An
    entry whose parent has not arrived waits, and so do its descendants."""
    children: dict[str | None, list[Entry]] = {}
    for entry in entries:
        children.setdefault(entry.parent_id, []).append(entry)
    ready = [
        e
        for parent, group in children.items()
        if parent is None or parent in present
        for e in group
    ]
    ready.sort(key=lambda entry: entry.id)
    taken: list[Entry] = []
    while ready:
        entry = ready.pop()
        if entry.id in blocked:
            continue
        taken.append(entry)
        ready.extend(sorted(children.get(entry.id, ()), key=lambda child: child.id))
    return taken


def image_hashes(entry: Entry) -> set[str]:
    """The sha256 of every image an entry shows (messages and tool results)."""
    found: set[str] = set()
    stack: list[Any] = [entry.payload.to_dict()]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "image" and isinstance(item.get("sha256"), str):
                found.add(item["sha256"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def descends(view_parents: Callable[[str], str | None], entry_id: str, ancestor: str) -> bool:
    """Whether ``ancestor`` is on the path from the root to ``entry_id``."""
    seen = 0
    current: str | None = entry_id
    while current is not None and seen < 1_000_000:
        if current == ancestor:
            return True
        current = view_parents(current)
        seen += 1
    return False
