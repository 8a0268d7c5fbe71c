"""The rows a path of entries is shown as.

Most entries are one row each. Tool results are the exception: a
``tool_result`` message whose calls are on the path is shown inside the cards
of the assistant message that made those calls, so it has no row of its own.

Pure Python (no Textual); building rows for 10,000 entries is one linear pass,
and the rows of another path (:meth:`Transcript.for_path`) cost only the entries
the two paths do not share: every change an entry makes to earlier rows or
indexes is logged, so it can be undone when that entry is left behind.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from core.branching.tree import shared_length
from core.sessions.content import ToolResultContent
from core.sessions.entries import Compaction, Entry
from core.sessions.messages import Message
from core.tools.outcome import ToolOutcome, saved_outcomes


@dataclass
class Row:
    """One displayed item: an entry and, for assistant messages, the results of its tool calls.

    Never changed once in a transcript (transcripts of two paths share rows):
    a result arriving replaces the row."""

    entry: Entry
    results: dict[str, ToolResultContent] = field(default_factory=dict)
    """Tool results by ``tool_call_id``, for the calls this entry makes."""
    outcomes: dict[str, ToolOutcome] = field(default_factory=dict)
    """How each of those calls ended (state, seconds), by ``tool_call_id``."""


class Transcript:
    """The rows of a path, with the indexes needed to update them as entries arrive."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        """Every entry added, in order (tool results included)."""
        self.rows: list[Row] = []
        self._row_of_entry: dict[str, int] = {}
        self._row_of_call: dict[str, int] = {}
        self.dim_before: int = 0
        """Rows before this index are above a compaction (shown dimmed)."""
        self._undo: list[_Undo] = []
        """What each entry changed beyond adding itself, in the order it was added."""

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def build(cls, entries: Sequence[Entry]) -> Transcript:
        transcript = cls()
        for entry in entries:
            transcript.add(entry)
        return transcript

    def for_path(self, entries: Sequence[Entry]) -> Transcript:
        """The transcript of ``entries``, another path from the root: the entries
        it shares with this one are kept as they are (this one is not changed)."""
        transcript = self._truncated(shared_length(self.entries, entries))
        for entry in entries[len(transcript.entries) :]:
            transcript.add(entry)
        return transcript

    def _truncated(self, count: int) -> Transcript:
        """A copy holding only the first ``count`` entries, as if built from them."""
        dropped = self.entries[count:]
        transcript = Transcript()
        transcript.entries = self.entries[:count]
        transcript.rows = self.rows[: self._rows_before(dropped)]
        transcript._row_of_entry = dict(self._row_of_entry)
        for entry in dropped:
            del transcript._row_of_entry[entry.id]
        transcript._row_of_call = dict(self._row_of_call)
        transcript.dim_before = self.dim_before
        cut = bisect.bisect_left(self._undo, count, key=lambda undo: undo.entry)
        transcript._undo = self._undo[:cut]
        for undo in reversed(self._undo[cut:]):
            undo.apply(transcript)
        return transcript

    def _rows_before(self, dropped: Sequence[Entry]) -> int:
        """How many rows come before those of ``dropped`` (a tail of the entries)."""
        for entry in dropped:
            index = self._row_of_entry[entry.id]
            if self.rows[index].entry is entry:
                return index
        return len(self.rows)

    def shared_rows(self, other: Transcript) -> int:
        """How many leading rows show the same as ``other``'s: both are paths
        from the root, so they agree up to the first row that differs."""
        lo, hi = 0, min(len(self.rows), len(other.rows))
        while lo < hi:  # the rows agree on a prefix: bisect for its end
            mid = (lo + hi) // 2
            if self._same_row(other, mid):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _same_row(self, other: Transcript, index: int) -> bool:
        mine, theirs = self.rows[index], other.rows[index]
        return mine.entry.id == theirs.entry.id and mine.results == theirs.results

    def row_index(self, entry_id: str) -> int | None:
        """The row showing ``entry_id`` (a tool result's row is its call's row)."""
        return self._row_of_entry.get(entry_id)

    def row_of_call(self, tool_call_id: str) -> int | None:
        """The row of the assistant message that made this tool call."""
        return self._row_of_call.get(tool_call_id)

    def add(self, entry: Entry) -> tuple[int, bool]:
        """Add an entry. Returns ``(row index, is_new_row)``; an existing row was updated
        when a tool result attached to its call (or the entry was already present)."""
        known = self._row_of_entry.get(entry.id)
        if known is not None:
            return known, False
        self.entries.append(entry)
        payload = entry.payload
        if isinstance(payload, Message) and payload.role == "tool_result":
            attached = self._attach_results(entry, payload)
            if attached is not None:
                return attached, False
        index = len(self.rows)
        self.rows.append(Row(entry))
        self._row_of_entry[entry.id] = index
        position = len(self.entries) - 1
        if isinstance(payload, Message) and payload.role == "assistant":
            for call in payload.tool_calls:
                self._undo.append(_Undo(position, call=(call.id, self._row_of_call.get(call.id))))
                self._row_of_call[call.id] = index
        elif isinstance(payload, Compaction):
            self._undo.append(_Undo(position, dim_before=self.dim_before))
            kept = self._row_of_entry.get(payload.first_kept_id) if payload.first_kept_id else None
            self.dim_before = kept if kept is not None else index
        return index, True

    def _attach_results(self, entry: Entry, message: Message) -> int | None:
        """Attach every result to its call's row; ``None`` if any result has no call here."""
        results = message.tool_results
        if not results:
            return None
        rows = [self._row_of_call.get(result.tool_call_id) for result in results]
        if any(row is None for row in rows):
            return None
        outcomes = saved_outcomes(message)
        position = len(self.entries) - 1
        for result, row in zip(results, rows, strict=False):
            assert row is not None
            old = self.rows[row]
            self._undo.append(_Undo(position, row=(row, old)))
            call_id = result.tool_call_id
            self.rows[row] = replace(
                old,
                results={**old.results, call_id: result},
                outcomes={**old.outcomes, call_id: outcomes[call_id]},
            )
        self._row_of_entry[entry.id] = rows[-1]  # type: ignore[assignment]
        return rows[-1]


@dataclass(frozen=True)
class _Undo:
    """What undoes one change entry number ``entry`` made to what came before it."""

    entry: int
    call: tuple[str, int | None] | None = None
    """A tool call id and the row it pointed to before (None: no row)."""
    row: tuple[int, Row] | None = None
    """A row's index and the row it replaced."""
    dim_before: int | None = None
    """The dimming limit before a compaction."""

    def apply(self, transcript: Transcript) -> None:
        if self.call is not None:
            call_id, row = self.call
            if row is None:
                transcript._row_of_call.pop(call_id, None)
            else:
                transcript._row_of_call[call_id] = row
        if self.row is not None and self.row[0] < len(transcript.rows):
            transcript.rows[self.row[0]] = self.row[1]
        if self.dim_before is not None:
            transcript.dim_before = self.dim_before
