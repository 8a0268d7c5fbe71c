"""No control byte from content reaches any output of the real ``tangents``:
every export format and flag, every ``sessions`` subcommand with and without
``--json``, and the notes of an import. A reply, a tool call and its result, a
title, a label, a model name and the imported file's name each carry ESC, CSI,
OSC 52, OSC 8, DCS, 8-bit CSI and OSC, a bidi override and a lone CR.
Machine formats keep the text exact (as JSON escapes); human formats show it
without its controls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.formats.tangents_json import to_json_document
from core.sessions.content import TextContent, ToolCallContent, ToolResultContent
from core.sessions.entries import Entry, entry_type_of
from core.sessions.messages import Message
from core.sessions.persistence import SessionInfo
from tests.integration.cli import run

HOSTILE = (
    "\x1b[2J\x1b[31mred\x1b[0m"  # ESC, CSI
    " \x1b]52;c;cHduZWQ=\x07"  # OSC 52: the clipboard
    " \x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"  # OSC 8: a hidden link
    " \x1bP1$qm\x1b\\"  # DCS
    " \x9b31m \x9d0;pwned-title\x9c"  # C1: 8-bit CSI and OSC
    " invoice \u202egnp.exe\u202c"  # bidi override
    " rm -rf ~\rls -la"  # lone CR
)
TITLE = "title " + HOSTILE
REPLY = "reply " + HOSTILE
OTHER_REPLY = "other branch " + HOSTILE
RESULT = "result " + HOSTILE
LABEL = "label " + HOSTILE
MODEL = "openai/model" + HOSTILE
PATH_ARG = "notes" + HOSTILE + ".md"
FILE_NAME = "session \x1b]0;pwned-title\x07 \x9b2J \u202egnp.json"
SESSION_ID = "019a0000-0000-7000-8000-000000000000"

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a terminal would obey: C0 but tab and newline (ESC and CR among them),
DEL, C1 and the bidi embeddings, overrides and isolates."""


def raw_controls(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    return sorted({f"U+{ord(match.group()):04X}" for match in RAW_CONTROL.finditer(text)})


def hostile_document() -> dict:
    """Two branches from the first question: the current one holds a tool call
    and its result, the other (not current) a reply of another model."""
    entries: list[Entry] = []

    def add(parent: str | None, payload) -> str:
        entry_id = f"019a0000-0000-7000-8000-0000000000{len(entries) + 1:02d}"
        created = f"2026-03-01T10:00:{len(entries):02d}.000000Z"
        entries.append(
            Entry(entry_id, parent, SESSION_ID, entry_type_of(payload), created, payload)
        )
        return entry_id

    model = {"model": MODEL, "provider": "litellm"}
    question = add(None, Message(role="user", content=(TextContent("question " + HOSTILE),)))
    call = add(
        question,
        Message(
            role="assistant",
            content=(
                TextContent(REPLY),
                ToolCallContent("call_1", "read_file", {"path": PATH_ARG}),
            ),
            stop_reason="tool_use",
            **model,
        ),
    )
    result = add(
        call,
        Message(
            role="tool_result",
            content=(ToolResultContent("call_1", (TextContent(RESULT),)),),
        ),
    )
    leaf = add(
        result,
        Message(role="assistant", content=(TextContent(REPLY),), stop_reason="stop", **model),
    )
    add(question, Message(role="assistant", content=(TextContent(OTHER_REPLY),), **model))
    info = SessionInfo(
        id=SESSION_ID,
        title=TITLE,
        created_at="2026-03-01T09:59:59.000000Z",
        updated_at=entries[-1].created_at,
        leaf_id=leaf,
        title_set_by_user=True,
    )
    return to_json_document(info, entries, {call: LABEL})


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database holding the hostile session, imported from a file whose name is hostile too."""
    folder = tmp_path_factory.mktemp("hostile")
    source = folder / FILE_NAME
    source.write_text(json.dumps(hostile_document()), encoding="utf-8")
    database = str(folder / "t.db")
    done = run("--db", database, "sessions", "import", str(source))
    assert done.returncode == 0, done.stderr
    return database


def tangents(db: str, *args: str) -> tuple[bytes, bytes]:
    """Run ``tangents --db DB ARGS`` and return its stdout and stderr as bytes."""
    done = run("--db", db, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.encode(), done.stderr.encode()


EXPORTS = [
    ("json",),
    ("markdown",),
    ("markdown", "--all-branches"),
    ("openai",),
    ("mplp",),
    ("pi",),
    ("html",),
]


@pytest.mark.parametrize("flags", EXPORTS, ids=" ".join)
def test_every_export_format_and_flag_writes_no_raw_control(db: str, flags: tuple[str, ...]):
    out, err = tangents(db, "sessions", "export", SESSION_ID, "--format", *flags)
    assert raw_controls(out) == [] and raw_controls(err) == []
    text = out.decode()
    if flags[0] in ("markdown", "html"):
        # Shown, without its controls: the bidi override as a visible marker.
        assert "invoice \u27e8U+202E\u27e9gnp.exe" in text
        assert "ls -la" in text and "rm -rf ~" in text
    if flags == ("markdown", "--all-branches"):
        assert "other branch" in text


def test_machine_formats_keep_the_text_exact(db: str) -> None:
    document = json.loads(tangents(db, "sessions", "export", SESSION_ID)[0])
    assert document["session"]["title"] == TITLE
    texts = json.dumps(document["entries"], ensure_ascii=False)
    for value in (REPLY, OTHER_REPLY, RESULT, MODEL, PATH_ARG):
        assert json.dumps(value, ensure_ascii=False)[1:-1] in texts
    assert LABEL in document["labels"].values()

    pi_lines = tangents(db, "sessions", "export", SESSION_ID, "--format", "pi")[0]
    pi = [json.loads(line) for line in pi_lines.decode().splitlines()]
    pi_texts = json.dumps(pi, ensure_ascii=False)
    for value in (REPLY, OTHER_REPLY, RESULT, LABEL, PATH_ARG):
        assert json.dumps(value, ensure_ascii=False)[1:-1] in pi_texts

    messages = json.loads(tangents(db, "sessions", "export", SESSION_ID, "--format", "openai")[0])
    assert REPLY in [m.get("content") for m in messages]


COMMANDS = [
    ("list",),
    ("list", "--json"),
    ("list", "--all"),
    ("show", SESSION_ID),
    ("show", SESSION_ID, "--json"),
    ("search", "reply"),
    ("search", "reply", "--json"),
    ("search", "result"),
    ("search", "result", "--json"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_sessions_command_writes_no_raw_control(db: str, command: tuple[str, ...]) -> None:
    out, err = tangents(db, "sessions", *command)
    assert raw_controls(out) == [] and raw_controls(err) == []
    if "--json" in command and command[0] == "list":
        assert json.loads(out)[0]["title"] == TITLE
    if "--json" in command and command[0] == "show":
        assert json.loads(out)["title"] == TITLE


def test_import_rename_archive_and_delete_write_no_raw_control(tmp_path: Path) -> None:
    source = tmp_path / FILE_NAME
    source.write_text(json.dumps(hostile_document()), encoding="utf-8")
    db = str(tmp_path / "t.db")
    outputs = [tangents(db, "sessions", "import", str(source))]
    imported = tangents(db, "sessions", "import", str(source), "--new-ids", "--json")
    assert json.loads(imported[0])["title"] == TITLE
    outputs.append(imported)
    again = run("--db", db, "sessions", "import", str(source))  # the same ids: refused
    assert again.returncode == 1
    outputs.append((again.stdout.encode(), again.stderr.encode()))
    outputs.append(tangents(db, "sessions", "rename", SESSION_ID, "new " + HOSTILE))
    for action in ("archive", "unarchive"):
        outputs.append(tangents(db, "sessions", action, SESSION_ID))
    outputs.append(tangents(db, "sessions", "delete", SESSION_ID, "--yes"))
    for out, err in outputs:
        assert raw_controls(out) == [] and raw_controls(err) == [], (out, err)


PI_HEADER = {
    "type": "session",
    "version": 3,
    "id": "5f0c2a4e-8d3b-4a51-9c7e-0b1d2e3f4a5b",
    "timestamp": "2026-01-10T09:00:00.000Z",
    "cwd": "/home/ada",
}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"


def pi_file() -> str:
    """A pi session with an entry of an unknown (hostile) type and an image of a hostile media type."""
    lines = [
        PI_HEADER,
        {
            "type": "message",
            "id": "a0000001",
            "parentId": None,
            "timestamp": "2026-01-10T09:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look " + HOSTILE},
                    {"type": "image", "data": PNG, "mimeType": "image/" + HOSTILE},
                ],
                "timestamp": 1768035601000,
            },
        },
        {
            "type": "x" + HOSTILE,
            "id": "a0000002",
            "parentId": "a0000001",
            "timestamp": "2026-01-10T09:00:02.000Z",
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def claude_file() -> str:
    """A Claude Code session with a line of an unknown (hostile) type and an
    image whose source is of a hostile type."""
    base = {"sessionId": "7f3e1c2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b", "isSidechain": False}
    lines = [
        {
            **base,
            "parentUuid": None,
            "type": "user",
            "uuid": "a1000001-0000-4000-8000-000000000001",
            "timestamp": "2026-02-10T12:00:01.000Z",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look " + HOSTILE},
                    {"type": "image", "source": {"type": "x" + HOSTILE, "media_type": HOSTILE}},
                    {"type": "y" + HOSTILE},
                ],
            },
        },
        {
            **base,
            "parentUuid": "a1000001-0000-4000-8000-000000000001",
            "type": "z" + HOSTILE,
            "uuid": "a1000002-0000-4000-8000-000000000002",
            "timestamp": "2026-02-10T12:00:02.000Z",
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


@pytest.mark.parametrize("kind", ["pi", "claude"])
def test_import_notes_write_no_raw_control(tmp_path: Path, kind: str) -> None:
    source = tmp_path / f"hostile.{kind}.jsonl"
    source.write_text(pi_file() if kind == "pi" else claude_file(), encoding="utf-8")
    db = str(tmp_path / "t.db")
    out, err = tangents(db, "sessions", "import", str(source), "--format", kind)
    assert raw_controls(out) == [] and raw_controls(err) == []
    assert "note: " in err.decode() and "\u27e8U+202E\u27e9" in err.decode()
    out, err = tangents(db, "sessions", "import", str(source), "--format", kind, "--json")
    assert raw_controls(out) == [] and raw_controls(err) == []
    notes = " ".join(json.loads(out)["notes"])
    assert "\u202egnp.exe" in notes  # kept exact in JSON, as an escape


def test_a_pi_export_escapes_c1_and_bidi(tmp_path: Path) -> None:
    source = tmp_path / "s.pi.jsonl"
    source.write_text(pi_file(), encoding="utf-8")
    db = str(tmp_path / "t.db")
    session_id = json.loads(tangents(db, "sessions", "import", str(source), "--json")[0])["id"]
    out, _ = tangents(db, "sessions", "export", session_id, "--format", "pi")
    assert raw_controls(out) == []
    assert "\\u202e" in out.decode() or "\\u202E" in out.decode()
