"""SqliteStore implements core's SessionStore protocol method for method."""

from __future__ import annotations

import inspect

from core.sessions.persistence import SessionStore
from storage import SqliteStore


def test_every_protocol_method_exists_with_the_same_signature() -> None:
    names = [n for n, v in vars(SessionStore).items() if inspect.iscoroutinefunction(v)]
    assert names
    for name in names:
        ours = getattr(SqliteStore, name)
        assert inspect.iscoroutinefunction(ours), name
        assert inspect.signature(ours) == inspect.signature(getattr(SessionStore, name)), name
