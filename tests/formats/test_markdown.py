"""The Markdown export's own structure stays readable (issue #14): a reply's
headings sit under its ``## Assistant``, a compaction's summary is quoted."""

from __future__ import annotations

from core.formats.markdown import nest_headings, to_markdown
from core.sessions.content import TextContent
from core.sessions.entries import BranchSummary, Compaction, Entry
from core.sessions.messages import Message
from core.sessions.persistence import SessionInfo

INFO = SessionInfo("s", "Demo", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")


def _path(*payloads) -> list[Entry]:
    entries: list[Entry] = []
    for payload in payloads:
        entries.append(Entry.new("s", entries[-1].id if entries else None, payload))
    return entries


def test_a_replys_headings_nest_under_the_message_heading() -> None:
    reply = "## Demo reply 1\n\nText.\n\n# Big\n\nSetext\n======\n\n####### not a heading"
    markdown = to_markdown(
        INFO,
        _path(
            Message("user", (TextContent("hi"),)),
            Message("assistant", (TextContent(reply),)),
        ),
    )
    headings = [line for line in markdown.splitlines() if line.startswith("#")]
    assert headings == [
        "# Demo",
        "## User",
        "## Assistant",
        "#### Demo reply 1",
        "### Big",
        "### Setext",
        "####### not a heading",
    ]


def test_code_blocks_lists_and_rules_are_left_alone() -> None:
    text = "```md\n# inside a fence\n```\n- item\n---\n~~~\n## also inside\n~~~\n#hashtag"
    assert nest_headings(text) == text
    assert nest_headings("   ###### six") == "   ###### six"


def test_compaction_and_branch_summaries_are_quoted() -> None:
    summary = "## Goal\nShip it.\n\n## Next steps\n- test"
    markdown = to_markdown(
        INFO,
        _path(
            Message("user", (TextContent("hi"),)),
            Compaction(summary, None, 1234),
            BranchSummary(None, "went elsewhere"),
        ),
    )
    assert (
        "## Compaction (1234 tokens summarized)\n\n> ## Goal\n> Ship it.\n>\n> ## Next steps\n> - test\n"
        in markdown
    )
    assert "## Branch summary\n\n> went elsewhere\n" in markdown
    assert not [line for line in markdown.splitlines() if line.startswith("## Goal")]
