"""What the footer shows about the current path, worked out from what is new.

Moving to another branch changes the end of the path, not its beginning, and
a reply adds to its end; entries never change once written. So the usage
summed from the root to each entry is remembered, and a path costs only the
entries not seen on an earlier one; the context size of the last few paths is
remembered too (flipping between alternatives asks for the same ones again).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.sessions.entries import Entry
from core.sessions.messages import Usage
from core.tokens import context_tokens, usage_unreported
from core.usage import entry_usage

REMEMBERED_CONTEXTS = 16
"""Context sizes kept (of the most recent paths and models asked about)."""


class BranchTotals:
    """The usage and context size of paths of one session, remembered."""

    def __init__(self) -> None:
        self._usage: dict[str, Usage] = {}
        """Per entry id: the usage summed along its path from the root, itself included."""
        self._contexts: dict[tuple[str, str], int] = {}
        """Per (last entry id, model): the context tokens of the path ending there."""
        self._estimated: dict[str, bool] = {}
        """Per last entry id: whether no reply of the path ending there reported usage."""

    def usage(self, path: Sequence[Entry]) -> Usage:
        """The usage summed along ``path`` (:func:`core.usage.total_usage`)."""
        known = self._known_prefix(path)
        total = self._usage[path[known - 1].id] if known else Usage()
        for entry in path[known:]:
            usage = entry_usage(entry)
            if usage is not None:
                total = total + usage
            self._usage[entry.id] = total
        return total

    def context_tokens(self, path: Sequence[Entry], model: str) -> int:
        """What the next request for ``path`` will hold, estimated
        (:func:`core.tokens.context_tokens` with ``exact=False``)."""
        key = (path[-1].id if path else "", model)
        tokens = self._contexts.pop(key, None)
        if tokens is None:
            tokens = context_tokens(path, model, exact=False)
            if len(self._contexts) >= REMEMBERED_CONTEXTS:
                del self._contexts[next(iter(self._contexts))]  # the least recently asked
        self._contexts[key] = tokens
        return tokens

    def context_estimated(self, path: Sequence[Entry]) -> bool:
        """Whether no reply on ``path`` reported its usage (remembered for its
        last entry): :meth:`context_tokens` is then an estimate throughout."""
        key = path[-1].id if path else ""
        estimated = self._estimated.get(key)
        if estimated is None:
            estimated = self._estimated[key] = usage_unreported(path)
            if len(self._estimated) > REMEMBERED_CONTEXTS:
                del self._estimated[next(iter(self._estimated))]
        return estimated

    def _known_prefix(self, path: Sequence[Entry]) -> int:
        """How many leading entries of ``path`` have their sum remembered: a
        prefix, since each path's sums are remembered from its root on."""
        lo, hi = 0, len(path)
        while lo < hi:
            mid = (lo + hi) // 2
            if path[mid].id in self._usage:
                lo = mid + 1
            else:
                hi = mid
        return lo
