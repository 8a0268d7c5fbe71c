"""Pinned notes in exports (issue 35): Tangents JSON and pi files give them
back (pi through a custom entry, as it has none), Markdown and HTML show them."""

from __future__ import annotations

import json

import pytest

from core.formats import FormatError, parse_import
from core.formats.html import to_html
from core.formats.markdown import to_markdown
from core.formats.pi_export import to_pi_jsonl
from core.formats.tangents_json import to_json_document
from core.sessions.content import TextContent
from core.sessions.entries import Note
from core.sessions.persistence import SessionInfo
from tests.core.test_context import assistant, chain, user

NOTE = Note("Answer in <b>French</b>", depth=2)


def session():
    entries = chain(user("first"), assistant(TextContent("one")), NOTE, user("second"), Note("", 4))
    entries = [e.__class__(**{**e.__dict__, "session_id": "s-1"}) for e in entries]
    info = SessionInfo(
        id="s-1",
        title="notes",
        created_at=entries[0].created_at,
        updated_at=entries[-1].created_at,
        leaf_id=entries[-1].id,
    )
    return info, entries


def payloads(entries) -> list:
    return [e.payload for e in entries]


def test_tangents_json_and_pi_give_the_notes_back() -> None:
    info, entries = session()
    document = json.dumps(to_json_document(info, entries, {}))
    assert payloads(parse_import(document).entries) == payloads(entries)
    pi = to_pi_jsonl(info, entries, {}, {})
    customs = [json.loads(line) for line in pi.splitlines() if '"tangents-note"' in line]
    assert [c["data"] for c in customs] == [NOTE.to_dict(), {"text": "", "depth": 4}]
    imported = parse_import(pi)
    assert payloads(imported.entries) == payloads(entries) and imported.notes == ()


def test_a_malformed_note_in_a_pi_file_is_refused_with_its_line() -> None:
    info, entries = session()
    lines = [json.loads(line) for line in to_pi_jsonl(info, entries, {}, {}).splitlines()]
    [number] = [n for n, line in enumerate(lines, 1) if line.get("customType") == "tangents-note"][
        :1
    ]
    lines[number - 1]["data"]["depth"] = "two"
    with pytest.raises(FormatError, match=f"line {number}.*malformed tangents note"):
        parse_import("\n".join(json.dumps(line) for line in lines))


def test_markdown_and_html_show_the_note_and_its_removal() -> None:
    info, entries = session()
    markdown = to_markdown(info, entries)
    assert "## Note (pinned 2 messages from the end)" in markdown
    assert "Answer in <b>French</b>" in markdown and "*Note removed*" in markdown
    page = to_html(info, entries, {}, {})
    assert "pinned 2 messages from the end of every request" in page
    assert "the note was removed" in page
    assert "<b>French</b>" not in page and "&lt;b&gt;French&lt;/b&gt;" in page
