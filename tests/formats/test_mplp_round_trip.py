"""MPLP both ways (issue 35): agent replies as role ``agent`` with ``[Name] ``,
the session's status, one ``thread_id`` for a session and its forks; an
import reads ``agent`` messages back and refuses a dialog the schema refuses."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from core.formats import FormatError, detect_format, parse_import
from core.formats.mplp import mplp_id, to_mplp_dialog
from core.sessions.content import TextContent
from core.sessions.messages import Message
from tests.core.test_context import assistant, chain, user
from tests.formats.helpers import MPLP, mplp_errors
from tests.formats.test_mplp import _info
from tests.integration.cli import run


def reply(name: str, text: str) -> Message:
    return Message.from_dict(
        {"role": "assistant", "content": [{"type": "text", "text": text}], "agent": name}
    )


def round_table():
    path = chain(
        user("Is the bridge sound?"),
        reply("Critic", "The left pier is cracked."),
        reply("Poet", "Stone remembers every flood."),
    )
    return replace(_info(path), status="completed"), path


def dialog_of(status: str = "active") -> dict:
    info, path = round_table()
    return to_mplp_dialog(replace(info, status=status), path)


def test_agent_replies_go_out_as_named_agents_and_come_back_with_their_authors() -> None:
    info, path = round_table()
    dialog = to_mplp_dialog(info, path)
    assert mplp_errors(dialog) == []
    assert [(m["role"], m["content"]) for m in dialog["messages"]] == [
        ("user", "Is the bridge sound?"),
        ("agent", "[Critic] The left pier is cracked."),
        ("agent", "[Poet] Stone remembers every flood."),
    ]
    back = parse_import(json.dumps(dialog))
    replies = [e.payload.to_dict() for e in back.entries[1:]]
    assert [(r["agent"], r["content"][0]["text"]) for r in replies] == [
        ("Critic", "The left pier is cracked."),
        ("Poet", "Stone remembers every flood."),
    ]


def test_agent_messages_import_as_replies_and_the_status_with_them() -> None:
    dialog = json.loads((MPLP / "examples" / "dialog.minimal.json").read_text())
    dialog.pop("$comment")  # the examples carry one; the schema allows none
    dialog["status"] = "paused"
    dialog["messages"] += [
        {
            "role": "agent",
            "content": "[Reviewer] I see an issue.",
            "timestamp": "2025-01-01T00:00:01Z",
        },
        {"role": "agent", "content": "build passed", "timestamp": "2025-01-01T00:00:02Z"},
    ]
    text = json.dumps(dialog, indent=2)
    assert detect_format(text) == "mplp"
    imported = parse_import(text)
    assert imported.info.status == "paused"
    roles = [(e.payload.role, e.payload.text) for e in imported.entries]
    assert roles == [
        ("user", "content_value"),
        ("assistant", "I see an issue."),
        ("custom", "build passed"),
    ]
    parents = [e.parent_id for e in imported.entries]
    assert parents == [None] + [e.id for e in imported.entries[:-1]]


def test_status_thread_and_end_follow_the_session() -> None:
    info, path = round_table()
    done = to_mplp_dialog(info, path)
    assert done["status"] == "completed" and done["ended_at"] == info.updated_at
    assert mplp_errors(done) == []
    active = to_mplp_dialog(replace(info, status="active", archived=True), path)
    assert active["status"] == "active" and "ended_at" not in active
    fork = replace(info, id="another", parent_session_id=info.id)
    assert to_mplp_dialog(fork, path)["thread_id"] == done["thread_id"]
    assert done["thread_id"] == mplp_id("thread", info.id)
    assert parse_import(json.dumps(done)).info.status == "completed"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda d: d.update(status="finished"), "status"),
        (lambda d: d["messages"][0].update(role="robot"), "messages/0/role"),
        (lambda d: d.pop("dialog_id"), "the document: .dialog_id. is a required"),
        (lambda d: d["messages"][0].update(extra=1), "messages/0"),
    ],
)
def test_a_dialog_the_schema_refuses_is_refused(change, reason: str) -> None:
    dialog = dialog_of()
    change(dialog)
    with pytest.raises(FormatError, match=f"not a valid MPLP dialog: {reason}"):
        parse_import(json.dumps(dialog), "mplp")


def test_the_cli_imports_an_mplp_export_and_refuses_a_bad_one(tmp_path: Path) -> None:
    db = tmp_path / "data" / "t.db"
    good = tmp_path / "good.json"
    good.write_text(json.dumps(dialog_of("cancelled"), indent=2))
    result = run("--db", str(db), "sessions", "import", str(good), "--json")
    assert result.returncode == 0, result.stderr
    session_id = json.loads(result.stdout)["id"]
    listed = json.loads(run("--db", str(db), "sessions", "list", "--json").stdout)
    assert [(s["id"], s["status"], s["message_count"]) for s in listed] == [
        (session_id, "cancelled", 3)
    ]
    exported = run("--db", str(db), "sessions", "export", session_id, "--format", "mplp")
    assert json.loads(exported.stdout)["status"] == "cancelled"

    bad = dialog_of()
    bad["messages"][1]["role"] = "moderator"
    (tmp_path / "bad.json").write_text(json.dumps(bad, indent=2))
    refused = run("--db", str(db), "sessions", "import", str(tmp_path / "bad.json"))
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1
    assert "not a valid MPLP dialog: messages/1/role" in refused.stderr
    assert "nothing was imported" in refused.stderr
    assert len(json.loads(run("--db", str(db), "sessions", "list", "--json").stdout)) == 1


def test_assistant_text_is_kept_whole_without_a_name() -> None:
    dialog = to_mplp_dialog(*round_table()[:1], chain(user("q"), assistant(TextContent("[x] y"))))
    back = parse_import(json.dumps(dialog))
    assert back.entries[1].payload.role == "assistant"
    assert back.entries[1].payload.text == "[x] y"
