"""Who a message on a round table asks: a pure function.

``@Name`` anywhere in the text addresses the agent of that name (names match
case-insensitively, exactly); several are asked in the order they first appear;
``@all`` asks every agent in the config's order. A message without an
addressed agent goes to the session's model. An ``@word`` naming no agent stays
text, and the result says so. The text is sent as typed, ``@names`` included.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.settings import Agent

_MENTION = re.compile(r"(?<![\w@])@([A-Za-z][A-Za-z0-9_-]*)")
"""``@Name`` at the start or after a character that is not part of a word
(so ``me@example.com`` is no mention)."""


@dataclass(frozen=True)
class Addressed:
    agents: tuple[Agent, ...]
    """In the order they answer; empty: the session's model answers."""
    unknown: tuple[str, ...] = ()
    """``@words`` that name no agent, left as text."""

    @property
    def note(self) -> str | None:
        """One line for the user about the unknown names, if any."""
        if not self.unknown:
            return None
        names = ", ".join("@" + name for name in self.unknown)
        return f"no agent called {names}: left as text (agents are set in [[agents]])"


def addressed(text: str, agents: Sequence[Agent]) -> Addressed:
    by_name = {agent.name.casefold(): agent for agent in agents}
    chosen: list[Agent] = []
    unknown: list[str] = []
    for match in _MENTION.finditer(text):
        word = match.group(1).rstrip("-")
        key = word.casefold()
        if key == "all" and agents:
            found: Sequence[Agent] = agents
        elif key in by_name:
            found = (by_name[key],)
        else:
            if word not in unknown:
                unknown.append(word)
            continue
        chosen += [agent for agent in found if agent not in chosen]
    return Addressed(tuple(chosen), tuple(unknown))
