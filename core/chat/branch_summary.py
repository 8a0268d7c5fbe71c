"""Summarize a branch the user left, so the new position remembers it.

When the user moves from one place in the tree to another (a sibling, an
earlier message, any entry from the tree screen), the entries of the old path
after the common ancestor are the branch left behind. :func:`summarize_branch`
asks the model for a short summary of them and appends a ``branch_summary``
entry at the session's current leaf; the context builder sends it as a user
message starting with :data:`core.sessions.context.BRANCH_PREFIX`.

The caller moves the leaf first (``session.move_leaf``), then calls this.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.branching.tree import SessionTree
from core.providers.base import ChatRequest
from core.providers.complete import CompletionError, complete_text
from core.providers.slots import slots_for
from core.providers.target import Target
from core.sessions.entries import BranchSummary, Entry
from core.sessions.session import Session
from core.settings import Settings

CHARS_PER_TOKEN = 4
MIN_TRANSCRIPT_CHARS = 8_000
SUMMARY_MAX_TOKENS = 1_024

SYSTEM = (
    "You summarize a branch of a conversation between a user and an AI assistant. "
    "The user explored this branch, then went back to an earlier point to try something "
    "else. Another model will read your summary as a note of what happened in the branch.\n\n"
    "Do NOT continue the conversation. Do NOT answer questions found in it. "
    "Output ONLY the summary."
)

INSTRUCTIONS = """\
Summarize the branch above in a few short bullet points:
- what the user tried or asked in it;
- what was found, decided or produced (key facts, code, file names, errors);
- anything from it that may matter later, or why the user may have left it.
Be brief: at most about 200 words."""


class BranchSummaryError(Exception):
    """The summary could not be made (nothing to summarize, or the request failed)."""


def summary_prompt(transcript: str) -> str:
    """The user message asking for a summary of the branch ``transcript``."""
    return f"<branch>\n{transcript}\n</branch>\n\n{INSTRUCTIONS}"


def summarizable(entries: Sequence[Entry]) -> list[Entry]:
    """The entries worth summarizing: messages (and earlier summaries), not model changes."""
    return [e for e in entries if e.type in ("message", "branch_summary", "compaction")]


async def summarize_branch(
    session: Session,
    settings: Settings,
    *,
    model: str,
    old_leaf_id: str | None,
    new_entry_id: str | None,
    target: Target,
    tree: SessionTree | None = None,
    on_wait=None,
) -> Entry:
    """Summarize the branch from the common ancestor of ``old_leaf_id`` and
    ``new_entry_id`` down to ``old_leaf_id``; append the summary at the
    session's current leaf and return that entry. ``model`` writes it, sent
    by ``target`` (the conversation's).

    ``tree`` may be passed when the caller already has it (built after the
    old branch was written); otherwise it is read from the store.
    :class:`BranchSummaryError` when there is nothing to summarize or the
    model fails.
    """
    from core.compaction.plan import serialize_transcript, summary_max_tokens
    from core.compaction.run import budget
    from core.tokens import context_window

    if tree is None:
        tree = SessionTree.from_entries(
            await session.store.entries(session.id), {}, session.leaf_id
        )
    if old_leaf_id is None or old_leaf_id not in tree:
        raise BranchSummaryError("there is no branch to summarize")
    if new_entry_id is not None and new_entry_id not in tree:
        raise BranchSummaryError(f"unknown entry {new_entry_id!r}")
    branch = tree.branch_entries(old_leaf_id, new_entry_id)
    content = summarizable(branch)
    if not content:
        raise BranchSummaryError("the branch left behind holds no messages")

    window = context_window(model, settings.context_windows)
    keep = budget(model, settings).keep_recent_tokens
    reply = summary_max_tokens(SUMMARY_MAX_TOKENS, window, keep, None)
    least = min(MIN_TRANSCRIPT_CHARS, window * CHARS_PER_TOKEN // 4)  # a small window
    max_chars = max(least, (window - reply - 1_000) * CHARS_PER_TOKEN)
    transcript = serialize_transcript(content, max_chars)
    from core.compaction.plan import request_messages

    request = ChatRequest(
        model=target.model,
        messages=request_messages(summary_prompt(transcript)),
        system=SYSTEM,
        max_tokens=reply,
        api_base=target.api_base,
        api_key=target.api_key,
        slots=slots_for(target, settings),
        pace=settings.pace,
    )
    try:
        text, _ = await complete_text(request, model, settings, on_wait)
    except CompletionError as error:
        raise BranchSummaryError(str(error)) from None
    return await session.append(BranchSummary(from_id=branch[0].id, summary=text))
