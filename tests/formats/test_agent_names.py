"""Issue 35: exports keep who said what on a round table. The json and pi
files give each reply back with its agent; markdown and html name it; the
openai export is the next request, where the agents speak as named users;
summaries are made from a transcript that names each speaker."""

from __future__ import annotations

import json

from core.compaction.plan import serialize_transcript
from core.formats.html import to_html
from core.formats.markdown import to_markdown
from core.formats.openai import to_openai_messages
from core.formats.pi import from_pi_jsonl
from core.formats.pi_export import to_pi_jsonl
from core.formats.tangents_json import from_json_text, to_json_document
from core.sessions.content import TextContent, ThinkingContent, ToolCallContent
from core.sessions.entries import Entry
from core.sessions.ids import uuid7
from core.sessions.messages import Message
from core.sessions.persistence import SessionInfo


def round_table() -> tuple[SessionInfo, list[Entry]]:
    session_id = uuid7()
    payloads = [
        Message("user", (TextContent("@Critic @Poet judge"),)),
        Message(
            "assistant",
            (ThinkingContent("hm"), TextContent("Too long.")),
            model="lab/critic",
            stop_reason="stop",
            agent="Critic",
        ),
        Message(
            "assistant",
            (TextContent("Short and sweet."), ToolCallContent("c1", "read_file", {}, "{}")),
            model="lab/poet",
            stop_reason="stop",
            agent="Poet",
        ),
        Message("assistant", (TextContent("Plain."),), model="lab/plain", stop_reason="stop"),
        Message("user", (TextContent("thanks"),)),
    ]
    entries: list[Entry] = []
    for payload in payloads:
        entries.append(Entry.new(session_id, entries[-1].id if entries else None, payload))
    first = entries[0].created_at
    return SessionInfo(session_id, "table", first, first, leaf_id=entries[-1].id), entries


def agents_of(entries) -> list[str | None]:
    return [e.payload.agent for e in entries if e.message and e.message.role == "assistant"]


def test_json_and_pi_give_the_authors_back() -> None:
    info, entries = round_table()
    expected = ["Critic", "Poet", None]
    document = json.dumps(to_json_document(info, entries, {}, []))
    assert agents_of(from_json_text(document).entries) == expected
    assert agents_of(from_pi_jsonl(to_pi_jsonl(info, entries, {}, {})).entries) == expected


def test_markdown_and_html_name_the_agent() -> None:
    info, entries = round_table()
    markdown = to_markdown(info, entries)
    assert "## Critic (lab/critic)" in markdown and "## Poet (lab/poet)" in markdown
    assert "## Assistant (lab/plain)" in markdown
    page = to_html(info, entries, {}, {})
    assert '<span class="who">Critic (lab/critic)</span>' in page
    assert '<span class="who">lab/plain</span>' in page


def test_the_openai_export_is_the_request_with_named_speakers() -> None:
    _, entries = round_table()
    messages = to_openai_messages(entries)
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == (
        "@Critic @Poet judge\nCritic: Too long.\nPoet: Short and sweet.\n"
        "[Poet used tools: read_file]"
    )
    assert messages[1]["content"] == "Plain."


def test_a_summary_transcript_says_who_said_what() -> None:
    _, entries = round_table()
    transcript = serialize_transcript(entries)
    assert "[Critic thinking]: hm" in transcript
    assert "[Critic]: Too long." in transcript
    assert "[Poet]: Short and sweet." in transcript
    assert "[Poet tool calls]: read_file" in transcript
    assert "[Assistant]: Plain." in transcript
