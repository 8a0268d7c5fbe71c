"""How each tool call of a round ended, saved with the round's results.

A front end shows a card per call (done, error or denied, and how long it
ran); reopening the session must show the same cards, so the agent loop keeps
this in the ``tool_result`` message's ``meta`` (which no provider is sent).
Sessions without it (imports, older saves) fall back to the result's
``is_error``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from core.sessions.content import ToolResultContent
from core.sessions.messages import Message

OutcomeState = Literal["done", "error", "denied"]
META_KEY = "tool_outcomes"
_STATES = ("done", "error", "denied")


@dataclass(frozen=True)
class ToolOutcome:
    state: OutcomeState
    seconds: float | None = None
    """How long the call ran; None if it never started."""

    def to_dict(self) -> dict[str, Any]:
        return {"state": self.state, "seconds": self.seconds}


def outcomes_meta(outcomes: Mapping[str, ToolOutcome]) -> dict[str, Any]:
    """The ``meta`` of a ``tool_result`` message recording ``outcomes`` by call id."""
    return (
        {META_KEY: {call_id: outcome.to_dict() for call_id, outcome in outcomes.items()}}
        if outcomes
        else {}
    )


def saved_outcomes(message: Message) -> dict[str, ToolOutcome]:
    """The outcome of every result in ``message`` by call id (from ``meta``, else from ``is_error``)."""
    recorded = message.meta.get(META_KEY) if isinstance(message.meta, dict) else None
    recorded = recorded if isinstance(recorded, dict) else {}
    return {
        result.tool_call_id: _outcome(result, recorded.get(result.tool_call_id))
        for result in message.tool_results
    }


def _outcome(result: ToolResultContent, saved: Any) -> ToolOutcome:
    fallback: OutcomeState = "error" if result.is_error else "done"
    if not isinstance(saved, dict):
        return ToolOutcome(fallback)
    state: OutcomeState = saved["state"] if saved.get("state") in _STATES else fallback
    seconds: Any = saved.get("seconds")
    valid = (
        isinstance(seconds, (int, float))
        and not isinstance(seconds, bool)
        and math.isfinite(seconds)
        and seconds >= 0
    )
    return ToolOutcome(state, float(seconds) if valid else None)
