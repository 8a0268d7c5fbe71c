"""Who writes a summary, and where its requests go."""

from __future__ import annotations

from dataclasses import dataclass

from core.providers.target import Target


@dataclass(frozen=True)
class Summarizer:
    """The model that summarises, as the user names it (its window and output
    limit are looked up by this name), and the target its requests are sent
    by, decided by the conversation (:func:`core.chat.target.summarizer_for`)."""

    model: str
    target: Target
