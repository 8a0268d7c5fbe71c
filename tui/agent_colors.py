"""The colour a round-table agent's name is shown in: its ``color`` setting
(any colour Textual's CSS knows: ``"red"``, ``"#e5a50a"``, ``"rgb(...)"``),
else one of a palette, by the agent's place in ``[[agents]]``, so two agents
without a colour still look different."""

from __future__ import annotations

from collections.abc import Sequence

from textual.color import Color, ColorParseError

from core.settings import Agent

PALETTE = ("#e5a50a", "#2ec27e", "#62a0ea", "#dc8add", "#ff7800", "#5bc8af")
"""Readable on dark and light themes alike."""


def problems(agents: Sequence[Agent]) -> list[str]:
    """One line for each agent whose ``color`` is not a colour."""
    found = []
    for index, agent in enumerate(agents):
        if agent.color is not None and _parsed(agent.color) is None:
            found.append(
                f"agents[{index}].color: {agent.color!r} is not a colour "
                "(a name such as 'red', or '#rrggbb')"
            )
    return found


def agent_colors(agents: Sequence[Agent]) -> dict[str, Color]:
    """Each agent's colour, by its name casefolded (as ``@names`` match)."""
    return {
        agent.name.casefold(): _parsed(agent.color or "") or Color.parse(_default(index))
        for index, agent in enumerate(agents)
    }


def _default(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _parsed(text: str) -> Color | None:
    try:
        return Color.parse(text) if text else None
    except ColorParseError:
        return None
