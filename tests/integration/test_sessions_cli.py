"""``tangents sessions import/export/search`` end to end: the real program on
real database files, the fixtures as a user would pass them."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from core.sessions.context import BRANCH_PREFIX
from core.sessions.ids import short_id
from tests.formats.helpers import PI_LOCAL, PI_REAL, mplp_errors
from tests.integration.cli import run, sessions


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def import_json(db: Path, path: Path | str, *extra: str, input: str | None = None) -> dict:
    result = run("--db", str(db), "sessions", "import", str(path), "--json", *extra, input=input)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def export(db: Path, session_id: str, fmt: str) -> str:
    result = run("sessions", "export", session_id, "--format", fmt, "--db", str(db))
    assert result.returncode == 0, result.stderr
    return result.stdout


def state(db: Path) -> tuple[str, int, int]:
    """The database file's digest and its session and entry counts."""
    conn = sqlite3.connect(db)
    try:
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM entries)"
        ).fetchone()
    finally:
        conn.close()
    return hashlib.sha256(db.read_bytes()).hexdigest(), *counts


def test_pi_session_import_then_list_export_and_search(db: Path) -> None:
    imported = import_json(db, PI_REAL / "before-compaction.jsonl")
    assert imported["format"] == "pi"
    assert (imported["messages"], imported["compactions"], imported["model_changes"]) == (
        990,
        2,
        10,
    )
    [listed] = sessions(db)
    assert listed["id"] == imported["id"] and listed["title"].startswith("alright, read @packages")
    markdown = export(db, imported["id"], "markdown")
    assert markdown.count("## Compaction (") == 2 and "# Context Checkpoint" in markdown
    assert (
        "## Assistant (anthropic/claude-opus-4-5, **aborted**, error: Request was aborted.)"
        in markdown
    )
    result = run("--db", str(db), "sessions", "search", "AgentSession", "--json", "--limit", "5")
    assert result.returncode == 0, result.stderr
    hits = json.loads(result.stdout)
    assert len(hits) == 5 and {h["session_id"] for h in hits} == {imported["id"]}
    assert all("agentsession" in h["snippet"].lower() for h in hits)
    assert set(hits[0]) == {"session_id", "entry_id", "title", "snippet", "rank", "updated_at"}
    plain = run("--db", str(db), "sessions", "search", "AgentSession", "--limit", "1")
    assert plain.returncode == 0 and plain.stdout.startswith(short_id(imported["id"]))


def test_human_output_names_the_session_and_counts(db: Path) -> None:
    result = run("sessions", "import", str(PI_LOCAL / "branched.jsonl"), "--db", str(db))
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    [listed] = sessions(db)
    assert first == f"Imported session {listed['id']} (pi): Pixels and milk"
    assert second == (
        "  17 entries: 13 messages, 1 compaction, 1 branch summary, 2 model changes; "
        "2 branches, 2 labels, 2 images"
    )
    assert result.stderr == "note: skipped 1 extension state entry (type custom)\n"


def test_json_export_import_export_is_identical_and_reimport_is_refused(
    db: Path, tmp_path: Path
) -> None:
    session_id = import_json(db, PI_LOCAL / "branched.jsonl")["id"]
    document = export(db, session_id, "json")
    exported = tmp_path / "session.json"
    exported.write_text(document)
    other = tmp_path / "other" / "o.db"
    again = import_json(other, exported)
    assert again["id"] == session_id and again["images"] == 2 and again["labels"] == 2
    assert export(other, session_id, "json") == document

    before = state(db)
    refused = run("--db", str(db), "sessions", "import", str(exported))
    assert refused.returncode == 1
    assert refused.stderr == (
        f"tangents: cannot import {exported}: a session with id {session_id} already exists; "
        "--new-ids imports a copy (nothing was imported)\n"
    )
    assert state(db) == before

    copy = import_json(db, exported, "--new-ids")
    assert copy["id"] != session_id and len(sessions(db)) == 2
    original, copied = json.loads(document), json.loads(export(db, copy["id"], "json"))
    old_ids = [session_id] + [e["id"] for e in original["entries"]]
    new_ids = [copy["id"]] + [e["id"] for e in copied["entries"]]
    assert not set(old_ids) & set(new_ids)
    renamed = json.dumps(copied)
    for old, new in zip(old_ids, new_ids, strict=False):
        renamed = renamed.replace(new, old)
    assert json.loads(renamed) == original, (
        "the copy is the session with every id replaced consistently"
    )


def test_openai_export_carries_images_and_imports_back(db: Path, tmp_path: Path) -> None:
    session_id = import_json(db, PI_LOCAL / "branched.jsonl")["id"]
    messages = json.loads(export(db, session_id, "openai"))
    roles = [m["role"] for m in messages]
    assert roles == [  # the branch summary and the next two user messages: one user turn
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert messages[0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert messages[1]["tool_calls"][0]["function"] == {
        "name": "read",
        "arguments": '{"path": "notes.txt"}',
    }
    assert messages[7]["content"][0]["type"] == "image_url", (
        "a tool's image follows its tool message"
    )
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    imported = import_json(db, path)
    summaries = [m for m in messages if str(m["content"]).startswith(BRANCH_PREFIX)]
    assert len(summaries) == 1, "the branch summary, as the model sees it"
    assert imported["format"] == "openai" and imported["messages"] == len(messages)
    assert imported["branches"] == 1 and imported["images"] == 2
    assert json.loads(export(db, imported["id"], "openai")) == messages


def test_openai_import_from_stdin(db: Path) -> None:
    chat = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Name a tree."},
        {"role": "assistant", "content": "Oak."},
    ]
    imported = import_json(db, "-", input=json.dumps(chat))
    assert (imported["messages"], imported["title"]) == (3, "Name a tree.")
    assert "## Assistant\n\nOak." in export(db, imported["id"], "markdown")


def test_mplp_export_is_valid_against_the_schema(db: Path) -> None:
    for fixture in (PI_LOCAL / "branched.jsonl", PI_LOCAL / "linear-v1.jsonl"):
        session_id = import_json(db, fixture)["id"]
        dialog = json.loads(export(db, session_id, "mplp"))
        assert mplp_errors(dialog) == [], fixture.name
        assert dialog["messages"] and dialog["events"][0]["data"]["session_id"] == session_id


def _lines(name: str = "branched.jsonl") -> list[str]:
    return (PI_LOCAL / name).read_text().splitlines()


def _edited(line_no: int, **changes) -> str:
    lines = _lines()
    data = json.loads(lines[line_no - 1])
    data.update(changes)
    lines[line_no - 1] = json.dumps(data)
    return "\n".join(lines) + "\n"


MALFORMED = {
    "bad-json": (
        "\n".join(_lines()[:6] + ['{"type": "message", "id": oops}'] + _lines()[7:]) + "\n",
        "line 7: not valid JSON",
    ),
    "dangling-parent": (
        _edited(9, parentId="ffffffff"),
        "line 9: parentId 'ffffffff' points to no entry in the file",
    ),
    "unknown-role": (
        _edited(10, message={"role": "teleport", "content": []}),
        "line 10: unknown message role 'teleport'",
    ),
    "truncated": (
        (PI_LOCAL / "branched.jsonl").read_text()[:-90],
        "the file ends too early (truncated?)",
    ),
    "tangents-json-truncated": (
        '{"format": "tangents-session", "version": 1, "session": {"id": "x", "crea',
        "line 1: not valid JSON",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_is_refused_whole_and_writes_nothing(
    db: Path, tmp_path: Path, case: str
) -> None:
    import_json(db, PI_LOCAL / "linear-v1.jsonl")
    before = state(db)
    text, expected = MALFORMED[case]
    bad = tmp_path / f"{case}.jsonl"
    bad.write_text(text)
    result = run("--db", str(db), "sessions", "import", str(bad))
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"tangents: cannot import {bad}: ")
    assert expected in result.stderr and result.stderr.endswith("(nothing was imported)\n")
    assert result.stderr.count("\n") == 1
    assert state(db) == before


def test_usage_errors(db: Path, tmp_path: Path) -> None:
    missing = run("--db", str(db), "sessions", "import", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    unknown = run("--db", str(db), "sessions", "export", "no-such-id", "--format", "mplp")
    assert unknown.returncode == 2 and "no-such-id" in unknown.stderr
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b'{"x":\n"\xff\xfe"}')
    result = run("--db", str(db), "sessions", "import", str(binary))
    assert result.returncode == 1 and "line 2: not UTF-8 text" in result.stderr
    forced = run(
        "--db",
        str(db),
        "sessions",
        "import",
        str(PI_LOCAL / "branched.jsonl"),
        "--format",
        "openai",
    )
    assert forced.returncode == 1 and "line 2: not valid JSON (Extra data" in forced.stderr


def test_search_finds_across_sessions_and_handles_odd_queries(db: Path, tmp_path: Path) -> None:
    import_json(db, PI_LOCAL / "branched.jsonl")
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {"role": "user", "content": "Should I buy milk or oat milk?"},
                {"role": "assistant", "content": "Oat."},
            ]
        )
    )
    import_json(db, chat)
    hits = json.loads(run("--db", str(db), "sessions", "search", "milk", "--json").stdout)
    assert len({h["session_id"] for h in hits}) == 2
    titles = {h["title"] for h in hits}
    assert titles == {"Pixels and milk", "Should I buy milk or oat milk?"}
    prefix = json.loads(run("--db", str(db), "sessions", "search", "scree", "--json").stdout)
    assert sorted(h["snippet"] for h in prefix) == ["Take a screenshot.", "screen captured"]
    for query in ('"unbalanced', "AND OR NOT", "milk*)(", "NEAR(a b)"):
        result = run("--db", str(db), "sessions", "search", query, "--json")
        assert result.returncode == 0, (query, result.stderr)
        assert isinstance(json.loads(result.stdout), list)
    none = run("--db", str(db), "sessions", "search", "zebra")
    assert none.returncode == 1 and none.stderr == "No matches for 'zebra'.\n"


def test_help_lists_the_formats() -> None:
    from core.formats import IMPORT_FORMATS
    from core.formats.export import EXPORT_FORMATS

    export_help = run("sessions", "export", "--help").stdout
    assert "{" + ",".join(EXPORT_FORMATS) + "}" in export_help and "MPLP dialog" in export_help
    import_help = run("sessions", "import", "--help").stdout
    assert "{" + ",".join(("auto", *IMPORT_FORMATS)) + "}" in import_help
    assert "--new-ids" in import_help and "pi coding-agent session" in import_help


def test_error_quoting_the_file_sends_no_escape_sequence(db: Path, tmp_path: Path) -> None:
    session_id = import_json(db, PI_LOCAL / "linear-v1.jsonl")["id"]
    document = json.loads(export(db, session_id, "json"))
    document["labels"]["\x1b]0;pwned\x07\x1b[2J"] = "x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    result = run("--db", str(db), "sessions", "import", str(bad), "--new-ids")
    assert result.returncode == 1 and "labels an entry that is not in the file" in result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
