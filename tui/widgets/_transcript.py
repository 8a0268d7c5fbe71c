"""The rows a path of entries is shown as.

Most entries are one row each. Tool results are the exception: a
``tool_result`` message whose calls are on the path is shown inside the cards
of the assistant message that made those calls, so it has no row of its own.

Pure Python (no Textual); building rows for 10,000 entries is one linear pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.content import ToolResultContent
from core.entries import Compaction, Entry
from core.messages import Message
from core.tools.outcome import ToolOutcome, saved_outcomes


@dataclass
class Row:
    """One displayed item: an entry and, for assistant messages, the results of its tool calls."""

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

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def build(cls, entries: Sequence[Entry]) -> Transcript:
        transcript = cls()
        for entry in entries:
            transcript.add(entry)
        return transcript

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
        if isinstance(payload, Message) and payload.role == "assistant":
            for call in payload.tool_calls:
                self._row_of_call[call.id] = index
        elif isinstance(payload, Compaction):
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
        for result, row in zip(results, rows, strict=False):
            assert row is not None
            self.rows[row].results[result.tool_call_id] = result
            self.rows[row].outcomes[result.tool_call_id] = outcomes[result.tool_call_id]
        self._row_of_entry[entry.id] = rows[-1]  # type: ignore[assignment]
        return rows[-1]
