"""Text print mode says on stderr when a compaction or a retry starts and
ends (issue 32): a long silence otherwise while a small model summarizes."""

from __future__ import annotations

import pytest

from core.chat.events import CompactionEnded, CompactionStarted, Waiting
from core.providers.base import ProviderError, TextDelta
from core.sessions.entries import Compaction, Entry
from tui.modes.print_output import PipeSafeStdout, TextPrinter


def compaction_entry() -> Entry:
    return Entry.new("s1", None, Compaction(summary="s", first_kept_id="e1", tokens_before=3_900))


def test_a_compaction_says_when_it_starts_and_ends(capsys: pytest.CaptureFixture[str]) -> None:
    printer = TextPrinter(PipeSafeStdout())
    printer(CompactionStarted("overflow"))
    printer(CompactionEnded("overflow", compaction_entry()))
    printer(CompactionStarted("auto"))
    printer(CompactionEnded("auto", None))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4, lines
    assert lines[0].startswith("tangents: compacting the conversation")
    assert "too long" in lines[0]
    assert lines[1].startswith("tangents: compacted: 3,900 tokens summarized")
    assert lines[3] == "tangents: compaction failed or stopped; nothing was summarized"


def test_a_retry_says_when_it_went_through(capsys: pytest.CaptureFixture[str]) -> None:
    printer = TextPrinter(PipeSafeStdout())
    printer(Waiting(2, ProviderError("server", "busy", status=503)))
    printer(TextDelta("hello"))
    printer(TextDelta(" again"))
    printer.close()
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 2, lines
    assert "retrying in 2 s" in lines[0]
    assert lines[1] == "tangents: the retry went through"
    assert captured.out == "hello again\n"
