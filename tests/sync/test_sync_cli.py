"""``tangents sync`` between two machines sharing one folder (issue 34)."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path

from core.branching.tree import SessionTree
from storage.store import SqliteStore
from tests.sync.machines import Machine, continuations_at, entry_map


def two(tmp_path: Path) -> tuple[Machine, Machine]:
    folder = tmp_path / "shared"
    return Machine.make(tmp_path, "a", folder), Machine.make(tmp_path, "b", folder)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_sessions_go_both_ways_whole_and_a_second_sync_changes_nothing(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    from_a = a.ask("written on a")
    from_b = b.ask("written on b")
    report = a.sync()
    assert report["sent"] == {"sessions": 1, "entries": 3}
    assert report["received"] == {"sessions": 0, "entries": 0}
    report = b.sync()
    assert report["sent"] == {"sessions": 1, "entries": 3}
    assert report["received"] == {"sessions": 1, "entries": 3}
    assert a.sync()["received"] == {"sessions": 1, "entries": 3}
    assert a.session_ids() == b.session_ids() == {from_a, from_b}
    for session_id in (from_a, from_b):
        there, here = a.export(session_id), b.export(session_id)
        assert entry_map(there) == entry_map(here)
        assert there["session"]["title"] == here["session"]["title"]
    before = folder_bytes(a.folder)
    for machine in (a, b):
        report = machine.sync()
        assert report["sent"]["entries"] == report["received"]["entries"] == 0
    assert folder_bytes(a.folder) == before


def test_the_summary_is_one_line(tmp_path: Path) -> None:
    a, _ = two(tmp_path)
    a.ask("hello")
    result = a.run("sync", "--folder", str(a.folder))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1
    assert "sent 3 entries in 1 session, received 0 entries in 0 sessions" in result.stdout


def test_no_folder_is_a_one_line_error(tmp_path: Path) -> None:
    a, _ = two(tmp_path)
    for args in ((), ("--folder", str(tmp_path / "missing"))):
        result = a.run("sync", *args)
        assert result.returncode == 2
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr


def test_the_folder_can_come_from_the_config(tmp_path: Path) -> None:
    a, _ = two(tmp_path)
    a.ask("hello")
    (a.home / "config.toml").write_text(f"[sync]\nfolder = {json.dumps(str(a.folder))}\n")
    result = a.run("sync", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["sent"]["entries"] == 3


def test_two_offline_continuations_become_alternatives_at_their_fork(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    session_id = a.ask("the start")
    a.sync()
    b.sync()
    fork = a.show(session_id)["leaf_id"]
    a.ask("continued on a", "--session", session_id)
    b.ask("continued on b", "--session", session_id)
    a.sync()
    b.sync()
    a.sync()
    for machine in (a, b):
        assert continuations_at(machine, session_id, fork) == ["continued on a", "continued on b"]
        overview = machine.show(session_id)
        assert overview["branches"] == 2 and len(overview["leaves"]) == 2
    # each machine stays where it was
    assert a.show(session_id)["leaf_id"] != b.show(session_id)["leaf_id"]
    # the chat's tree shows them as alternatives ◀ 1/2 ▶ at the fork
    for machine in (a, b):
        tree = asyncio.run(load_tree(machine.db, session_id))
        assert [tree.siblings(child) for child in tree.children(fork)] == [(0, 2), (1, 2)]


async def load_tree(db: Path, session_id: str) -> SessionTree:
    store = await SqliteStore.open(db)
    try:
        return SessionTree.from_entries(await store.entries(session_id))
    finally:
        await store.close()


def test_a_half_copied_last_line_waits_for_the_rest(tmp_path: Path) -> None:
    a = Machine.make(tmp_path, "a", tmp_path / "on_a")
    b = Machine.make(tmp_path, "b", tmp_path / "on_b")
    session_id = a.ask("first")
    a.sync()
    a.ask("second", "--session", session_id)
    a.sync()
    # The engine has copied a's folder to b's, all but the end of the last line.
    shutil.copytree(a.folder / "tangents", b.folder / "tangents")
    journal = b.folder / "tangents" / a.device() / "entries.jsonl"
    whole = journal.read_bytes()
    journal.write_bytes(whole[:-40])
    report = b.sync()
    assert report["received"]["entries"] == 4
    assert report["skipped_lines"] == 0
    journal.write_bytes(whole)
    report = b.sync()
    assert report["received"]["entries"] == 1
    assert entry_map(b.export(session_id)) == entry_map(a.export(session_id))


def test_sync_engine_conflict_copies_change_nothing(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    session_id = a.ask("one")
    a.sync()
    mine = a.folder / "tangents" / a.device()
    for kind in ("entries", "registers"):
        journal = mine / f"{kind}.jsonl"
        shutil.copy(journal, mine / f"{kind} (conflicted copy).jsonl")
        shutil.copy(journal, mine / f"{kind}.sync-conflict-20261128-031500-ABCDEF.jsonl")
        (mine / f"{kind}-laptop.jsonl.tmp").write_bytes(journal.read_bytes()[:57])
    result = b.run("sync", "--folder", str(b.folder), "--json")
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(result.stdout)["received"] == {"sessions": 1, "entries": 3}
    assert entry_map(b.export(session_id)) == entry_map(a.export(session_id))
    report = a.sync()
    assert report["received"]["entries"] == 0 and report["refused"] == []


def test_an_entry_with_a_known_id_and_other_content_is_refused(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    session_id = a.ask("the real question")
    a.sync()
    lines = (a.folder / "tangents" / a.device() / "entries.jsonl").read_text().splitlines()
    question = next(line for line in lines if '"role":"user"' in line)
    forged = a.folder / "tangents" / "zz-other" / "entries.jsonl"
    forged.parent.mkdir()
    forged.write_text(question.replace("the real question", "a forged question") + "\n")
    result = b.run("sync", "--folder", str(b.folder))
    assert result.returncode == 0, result.stderr
    refused = result.stderr.splitlines()
    assert len(refused) == 1, result.stderr
    assert "zz-other" in refused[0] and a.device() in refused[0]
    text = json.dumps(b.export(session_id))
    assert "the real question" in text and "a forged question" not in text


def test_titles_are_last_writer_wins_whatever_the_clocks_say(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    c = Machine.make(tmp_path, "c", a.folder)
    session_id = a.ask("hello")
    a.sync()
    # A machine whose clock runs an hour ahead renamed the session.
    ahead = f"{time.time_ns() // 1_000_000 + 3_600_000:013d}.000000.fast-clock"
    skewed = a.folder / "tangents" / "fast-clock" / "registers.jsonl"
    skewed.parent.mkdir()
    line = {"t": "title", "s": session_id, "v": {"title": "from the fast clock", "by_user": True}}
    skewed.write_text(json.dumps({**line, "at": ahead}) + "\n")
    b.sync()
    assert b.export(session_id)["session"]["title"] == "from the fast clock"
    # b renames after seeing it: b's rename is later, although b's clock is behind.
    assert b.run("sessions", "rename", session_id, "renamed on b").returncode == 0
    b.sync()
    for machine in (a, c, b):
        machine.sync()
        assert machine.export(session_id)["session"]["title"] == "renamed on b"


def test_a_deletion_reaches_the_other_machine(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    gone = a.ask("to be deleted")
    kept = a.ask("to be kept")
    a.sync()
    b.sync()
    assert b.session_ids() == {gone, kept}
    assert a.run("sessions", "delete", gone, "--yes").returncode == 0
    a.sync()
    assert b.sync()["deleted"] == 1
    assert a.session_ids() == b.session_ids() == {kept}
    assert a.sync()["received"]["entries"] == 0
    assert a.session_ids() == {kept}


def test_archive_and_labels_travel(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    session_id = a.ask("hello")
    a.sync()
    b.sync()
    assert b.run("sessions", "archive", session_id).returncode == 0
    b.sync()
    a.sync()
    assert a.export(session_id)["session"]["archived"] is True


def test_a_continuation_after_a_deletion_elsewhere_brings_the_session_back(
    tmp_path: Path,
) -> None:
    a, b = two(tmp_path)
    session_id = a.ask("shared")
    a.sync()
    b.sync()
    assert a.run("sessions", "delete", session_id, "--yes").returncode == 0
    a.sync()
    b.ask("typed on b before it heard of the deletion", "--session", session_id)
    b.sync()
    a.sync()
    for machine in (a, b):
        text = json.dumps(machine.export(session_id))
        assert "typed on b before it heard of the deletion" in text and "shared" in text


def test_a_database_inside_the_folder_is_warned_about_once(tmp_path: Path) -> None:
    a, _ = two(tmp_path)
    db = a.folder / "inside.db"
    a.run("--db", str(db), "-m", "demo", "-p", "hello")
    first = a.run("--db", str(db), "sync", "--folder", str(a.folder))
    second = a.run("--db", str(db), "sync", "--folder", str(a.folder))
    assert first.returncode == second.returncode == 0
    assert len(first.stderr.splitlines()) == 1 and "inside the sync folder" in first.stderr
    assert second.stderr == ""


def test_a_wrong_sync_folder_setting_is_one_line(tmp_path: Path) -> None:
    a, _ = two(tmp_path)
    (a.home / "config.toml").write_text("[sync]\nfolder = 3\n")
    result = a.run("sync")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1 and "sync.folder" in result.stderr


def test_status_travels_and_a_new_copy_keeps_it(tmp_path: Path) -> None:
    a, b = two(tmp_path)
    session_id = a.ask("hello")
    assert a.run("sessions", "status", session_id, "paused").returncode == 0
    a.sync()
    b.sync()
    assert b.export(session_id)["session"]["status"] == "paused"
    assert b.run("sessions", "status", session_id, "completed").returncode == 0
    b.sync()
    a.sync()
    assert a.export(session_id)["session"]["status"] == "completed"
    refused = a.run("--session", session_id, "-m", "demo", "-p", "more")
    assert refused.returncode == 2 and "is completed" in refused.stderr
