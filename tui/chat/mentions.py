"""Tab completion of round-table ``@names`` in the input (no Textual here).

Only the ``@prefix`` right before the cursor is completed, as
:mod:`core.chat.addressing` reads a mention (not after a letter or ``@``, so
``me@example.com`` is no mention); names match case-insensitively and come
back as the config spells them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_PREFIX = re.compile(r"(?<![\w@])@([A-Za-z0-9_-]*)\Z")


def complete(before: str, names: Sequence[str]) -> tuple[int, str] | None:
    """How to complete the ``@prefix`` that ``before`` (the text up to the
    cursor) ends with: how many typed characters to replace and with what
    (a unique name gets a space after it; several names their common start).
    None when ``before`` does not end with an ``@prefix`` of any name."""
    found = _PREFIX.search(before)
    if found is None:
        return None
    typed = found.group(1)
    matches = [n for n in names if n.casefold().startswith(typed.casefold())]
    if not matches:
        return None
    if len(matches) == 1:
        return len(typed), matches[0] + " "
    folded = [n.casefold() for n in matches]
    size = len(typed)
    while all(len(f) > size and f[size] == folded[0][size] for f in folded):
        size += 1
    return len(typed), matches[0][:size] if size > len(typed) else typed


def mention_names(agent_names: Sequence[str]) -> list[str]:
    """The names Tab completes: every agent's, and ``all`` when there are any."""
    return [*agent_names, "all"] if agent_names else []
