"""The texts a context sends, with each summary apart from what follows it.

A compaction's or a branch's summary is sent in one user message with what
follows it (strict chat templates refuse two user turns in a row); tests that
follow a conversation message by message list the summary on its own."""

from __future__ import annotations

from collections.abc import Iterable

from core.sessions.context import BRANCH_END, BRANCH_PREFIX, SUMMARY_END, SUMMARY_PREFIX
from core.sessions.messages import Message


def split_summaries(text: str) -> list[str]:
    """``text`` as the summaries it starts with (without their end marker) and the rest."""
    for prefix, end in ((SUMMARY_PREFIX, SUMMARY_END), (BRANCH_PREFIX, BRANCH_END)):
        if text.startswith(prefix) and end in text:
            summary, _, rest = text.partition(end)
            rest = rest.lstrip("\n")
            return [summary, *split_summaries(rest)] if rest else [summary]
    return [text]


def context_texts(messages: Iterable[Message]) -> list[str]:
    return [piece for message in messages for piece in split_summaries(message.text)]
