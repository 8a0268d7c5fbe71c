"""Journals a sync engine may copy at any moment (real files in tmp_path)."""

from __future__ import annotations

from pathlib import Path

from core.sync.journal import append_lines, last_mark, read_lines


def test_a_last_line_without_its_newline_is_left_for_next_time(tmp_path: Path) -> None:
    path = tmp_path / "entries.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2}\n{"n": ')
    lines = read_lines(path)
    assert lines.objects == [{"n": 1}, {"n": 2}] and lines.skipped == 0
    path.write_bytes(path.read_bytes() + b"3}\n")
    assert read_lines(path).objects == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_an_append_after_a_cut_write_keeps_the_new_lines_whole(tmp_path: Path) -> None:
    path = tmp_path / "entries.jsonl"
    append_lines(path, [{"n": 1}])
    with open(path, "ab") as handle:
        handle.write(b'{"n": 2, "cut')  # a writer killed mid-line
    assert append_lines(path, [{"n": 3}, {"n": 4}]) == 2
    lines = read_lines(path)
    assert lines.objects == [{"n": 1}, {"n": 3}, {"n": 4}]
    assert lines.skipped == 1


def test_damaged_and_foreign_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "entries.jsonl"
    path.write_bytes(b'[1, 2]\n\xff\xfe\n{"ok": true}\n\n')
    lines = read_lines(path)
    assert lines.objects == [{"ok": True}] and lines.skipped == 2


def test_a_missing_journal_reads_as_empty(tmp_path: Path) -> None:
    assert read_lines(tmp_path / "nothing.jsonl").objects == []


def test_a_read_from_a_mark_takes_only_the_lines_after_it(tmp_path: Path) -> None:
    path = tmp_path / "entries.jsonl"
    path.write_bytes(b'{"n": 1}\n{"long": "' + b"x" * 10_000)
    first = read_lines(path)
    assert first.objects == [{"n": 1}]
    assert first.mark == last_mark(path) and first.mark is not None and first.mark[0] == 9
    path.write_bytes(path.read_bytes() + b'"}\n{"n": 3}\n')
    after = read_lines(path, first.mark)
    assert [sorted(obj) for obj in after.objects] == [["long"], ["n"]]
    assert after.mark == last_mark(path) and after.mark is not None
    assert after.mark[0] == path.stat().st_size
    # Rewritten before the mark: read whole again.
    path.write_bytes(b'{"n": 0}\n' + path.read_bytes()[9:])
    assert len(read_lines(path, first.mark).objects) == 3
