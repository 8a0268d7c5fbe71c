"""The words of compaction: what the summarizing model is told.

Kept in core, apart from the logic (:mod:`core.compaction.plan`) and from every
front end, so the prompts can be read and tuned in one place.
"""

from __future__ import annotations

SYSTEM = (
    "You are a context summarization assistant. You read a conversation between a user "
    "and an AI assistant, then write a structured summary that another model will use "
    "to continue the conversation.\n\n"
    "Do NOT continue the conversation. Do NOT answer questions found in it. "
    "Output ONLY the summary, in the format you are given."
)

_FORMAT = """\
## Goal
[What is the user trying to accomplish? Several items if the conversation covers several tasks.]

## Constraints and preferences
- [Constraints, preferences and requirements the user stated, or "(none)"]

## Progress
### Done
- [x] [Completed tasks and changes]

### In progress
- [ ] [Current work]

### Blocked
- [What prevents progress, or "(none)"]

## Key decisions
- **[Decision]**: [brief rationale]

## Next steps
1. [Ordered list of what should happen next]

## Critical context
- [Data, examples, names and references needed to continue, or "(none)"]

Keep each section concise. Preserve exact file paths, function names, identifiers and error messages."""

SUMMARIZE = (
    "The text in <conversation> tags above is a conversation to summarize. Write a structured "
    "context checkpoint that another model will use to continue it.\n\n"
    "Use this EXACT format:\n\n" + _FORMAT
)

UPDATE = (
    "The text in <conversation> tags above holds NEW messages of a conversation whose earlier "
    "part is already summarized in <previous-summary> tags. Update that summary with the new "
    "messages.\n\n"
    "Rules:\n"
    "- PRESERVE everything in the previous summary that still matters\n"
    "- ADD new goals, constraints, progress, decisions and context from the new messages\n"
    '- MOVE items from "In progress" to "Done" when they were completed\n'
    '- UPDATE "Next steps" to match what was accomplished\n'
    "- Remove only what is clearly no longer relevant\n\n"
    "Use this EXACT format:\n\n" + _FORMAT
)

TURN_PREFIX = """\
The text in <conversation> tags above is the BEGINNING of one turn that was too long to keep. \
Its end (the most recent work) is kept verbatim and follows this summary.

Summarize the beginning so the kept end can be understood:

## Original request
[What did the user ask for in this turn?]

## Early progress
- [Decisions made and work done in this part]

## Context for what follows
- [What is needed to understand the kept, more recent messages]

Be concise. Preserve exact file paths, function names, identifiers and error messages."""

TURN_PREFIX_CONTINUED = (
    "The <previous-summary> tags hold the summary of the earlier part of this beginning: "
    "update it with the text in <conversation> tags, in the same format."
)

FOCUS = "Additional focus for this summary, from the user: {focus}"

SPLIT_TURN_JOINER = (
    "\n\n---\n\n**Context of the current turn (its beginning was summarized too):**\n\n"
)
"""Joins the history summary and the turn-prefix summary of a split turn."""

NO_PRIOR_HISTORY = (
    "(No earlier conversation: everything before the current turn is summarized below.)"
)
