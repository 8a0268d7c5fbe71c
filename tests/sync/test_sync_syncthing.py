"""Two machines syncing through real Syncthing instances on loopback (issue 34).

Slow and needs the ``syncthing`` program (a Debian package, not on CI): part of
the long suite (``TANGENTS_LONG_TESTS=1``), skipped where it is missing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.long_suite import long_only
from tests.sync.machines import Machine, continuations_at
from tests.sync.syncthing import Syncthing, wait_until

pytestmark = [
    long_only,
    pytest.mark.skipif(shutil.which("syncthing") is None, reason="needs syncthing on PATH"),
]

DEADLINE = 300.0
"""Seconds a file may take to reach the other machine (two shared cores)."""


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[tuple[Syncthing, Syncthing]]:
    first = Syncthing.generate(tmp_path / "st-a", tmp_path / "a-folder")
    second = Syncthing.generate(tmp_path / "st-b", tmp_path / "b-folder")
    first.configure(second)
    second.configure(first)
    try:
        first.start()
        second.start()
        yield first, second
    finally:
        first.stop()
        second.stop()


def arrived(source: Machine, target: Machine, engines: tuple[Syncthing, ...]) -> None:
    """Wait until every journal ``source`` wrote is in ``target``'s folder, byte for byte."""
    mine = source.folder / "tangents" / source.device()

    def copied() -> bool:
        for path in mine.glob("*.jsonl"):
            there = target.folder / path.relative_to(source.folder)
            if not there.exists() or there.read_bytes() != path.read_bytes():
                return False
        return True

    wait_until(copied, f"{source.device()}'s journals in {target.folder}", DEADLINE, *engines)


def test_sessions_and_offline_forks_travel_through_syncthing(
    tmp_path: Path, engines: tuple[Syncthing, Syncthing]
) -> None:
    a = Machine.make(tmp_path, "a", engines[0].folder)
    b = Machine.make(tmp_path, "b", engines[1].folder)
    session_id = a.ask("written on a")
    assert a.sync()["sent"]["sessions"] == 1
    arrived(a, b, engines)
    assert b.sync()["received"] == {"sessions": 1, "entries": 3}
    assert session_id in b.session_ids()
    fork = a.show(session_id)["leaf_id"]
    assert b.show(session_id)["leaf_id"] == fork
    # Both continue the session apart, then sync both ways.
    a.ask("continued on a", "--session", session_id)
    b.ask("continued on b", "--session", session_id)
    a.sync()
    b.sync()
    arrived(a, b, engines)
    arrived(b, a, engines)
    a.sync()
    b.sync()
    for machine in (a, b):
        assert continuations_at(machine, session_id, fork) == ["continued on a", "continued on b"]
        assert machine.show(session_id)["branches"] == 2
