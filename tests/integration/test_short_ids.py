"""Ids people can type (issue 33 item 9): ids are time-ordered, so their
prefixes are shared by every session of a day (``01a2`` matched 17); the
short id is the random tail of the UUIDv7, shown by ``sessions list``,
``search`` and ``show``, and accepted wherever a whole id is."""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.sessions.ids import SHORT_ID_LENGTH, short_id, uuid7
from tests.integration.cli import run


def test_a_short_id_is_the_random_tail_and_differs_between_ids_made_together() -> None:
    ids = [uuid7() for _ in range(2_000)]
    shorts = {short_id(i) for i in ids}
    assert len(shorts) == len(ids)
    assert all(len(s) == SHORT_ID_LENGTH and ids[0].endswith(short_id(ids[0])) for s in shorts)


def test_short_ids_are_shown_and_accepted_by_the_sessions_commands(tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "t.db")]
    for prompt in ("plant an oak", "bake rye bread"):
        done = run(*db, "--model", "demo", "-p", prompt)
        assert done.returncode == 0, done.stderr
    listed = json.loads(run(*db, "sessions", "list", "--json").stdout)
    rye, oak = listed[0]["id"], listed[1]["id"]
    assert listed[0]["short_id"] == short_id(rye)

    plain = run(*db, "sessions", "list").stdout.splitlines()
    assert [line.split()[0] for line in plain] == [short_id(rye), short_id(oak)]

    found = run(*db, "sessions", "search", "rye")
    assert found.returncode == 0, found.stderr
    entry = json.loads(run(*db, "sessions", "search", "rye", "--json").stdout)[0]["entry_id"]
    assert re.search(rf"\b{short_id(rye)}\b.*\bentry {short_id(entry)}\b", found.stdout)

    shown = run(*db, "sessions", "show", short_id(oak))
    assert shown.returncode == 0, shown.stderr
    assert short_id(oak) in shown.stdout and "plant an oak" in shown.stdout

    renamed = run(*db, "sessions", "rename", short_id(oak).upper(), "Oaks")
    assert renamed.returncode == 0, renamed.stderr
    more = run(*db, "--model", "demo", "--session", short_id(rye), "-p", "and spelt?")
    assert more.returncode == 0, more.stderr
    branched = run(*db, "--model", "demo", "--from", short_id(entry), "-p", "and wheat?")
    assert branched.returncode == 0, branched.stderr
    exported = json.loads(run(*db, "sessions", "export", rye, "--format", "openai").stdout)
    asked = [m["content"] for m in exported if m["role"] == "user"]
    assert asked[-1].endswith("and wheat?") and "and spelt?" not in str(asked)


def test_an_unknown_short_id_is_one_line(tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "t.db")]
    assert run(*db, "--model", "demo", "-p", "hello").returncode == 0
    missing = run(*db, "sessions", "show", "zz99zz99")
    assert missing.returncode == 2
    [line] = missing.stderr.splitlines()
    assert "no session with id 'zz99zz99'" in line
