"""In-memory session trees for the branching tests and the tree benchmark."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from core.sessions.content import TextContent
from core.sessions.entries import Entry
from core.sessions.messages import Message

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
SESSION = "session-under-test"


def stamp(i: int) -> str:
    return (
        (EPOCH + timedelta(milliseconds=i))
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def message(text: str, role: str = "user") -> Message:
    return Message(role=role, content=(TextContent(text),))  # type: ignore[arg-type]


def entry(i: int, parent: str | None, text: str | None = None, role: str | None = None) -> Entry:
    """Entry number ``i`` (its id and creation time follow ``i``)."""
    role = role or ("user" if i % 2 == 0 else "assistant")
    return Entry(
        id=f"e{i:06d}",
        parent_id=parent,
        session_id=SESSION,
        type="message",
        created_at=stamp(i),
        payload=message(text if text is not None else f"{role} message number {i}", role),
    )


def from_parents(parents: list[int | None], roles: list[str] | None = None) -> list[Entry]:
    """Entries where entry i's parent is entry ``parents[i]`` (which must be < i)."""
    return [
        entry(i, None if p is None else f"e{p:06d}", role=None if roles is None else roles[i])
        for i, p in enumerate(parents)
    ]


def branched(n: int, branches: int, seed: int = 7) -> tuple[list[Entry], str]:
    """``n`` entries: a main chain, with ``branches`` side branches forking off
    random earlier entries. Returns the entries and the main chain's leaf."""
    rng = random.Random(seed)
    parents: list[int | None] = [None]
    branch_len = max(1, n // (2 * max(1, branches))) if branches else 0
    main_tip = 0
    starts = set(sorted(rng.sample(range(1, n), min(branches, n - 1)))) if branches else set()
    i = 1
    while i < n:
        if i in starts and i + branch_len < n:
            fork_at = rng.randrange(0, i)
            parent = fork_at
            for _ in range(branch_len):
                parents.append(parent)
                parent = i
                i += 1
            continue
        parents.append(main_tip)
        main_tip = i
        i += 1
    entries = from_parents(parents)
    return entries, f"e{main_tip:06d}"
