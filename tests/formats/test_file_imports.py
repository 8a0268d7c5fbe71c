"""Imports keep audio and documents as attachments: OpenAI ``input_audio`` and
``file`` parts, Claude Code ``document`` blocks (in a user line and in a tool
result), and pi files a Tangents export wrote. The kind comes from the bytes;
bad bytes are refused with the line or message that holds them.

The Claude Code and OpenAI lines are built here in the shapes of the fixtures
beside them (tests/fixtures/claude/README.md) and of the chat completions
request body; the bytes are the small real files of tests/attachments."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from core.formats import FormatError, parse_import
from core.formats.pi_export import to_pi_jsonl
from core.sessions.content import FileContent, TextContent, ToolResultContent
from core.sessions.entries import Entry
from core.sessions.messages import Message
from core.sessions.persistence import Blob, SessionInfo
from tests.attachments.samples import pdf_bytes, wav_bytes

SESSION = "7f3e1c2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _files(imported) -> list[FileContent]:
    return [
        block
        for entry in imported.entries
        if entry.message is not None
        for block in entry.message.content
        if isinstance(block, FileContent)
    ]


def _bytes_of(imported, block: FileContent) -> bytes:
    [blob] = [b for b in imported.blobs if b.sha256 == block.sha256]
    return blob.data


# --- OpenAI ------------------------------------------------------------------------


def test_openai_input_audio_and_file_parts_are_kept() -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Listen and read"},
                {
                    "type": "input_audio",
                    "input_audio": {"data": _b64(wav_bytes()), "format": "mp3"},
                },
                {
                    "type": "file",
                    "file": {
                        "filename": "paper.pdf",
                        "file_data": "data:application/pdf;base64," + _b64(pdf_bytes()),
                    },
                },
                {"type": "file", "file": {"file_id": "file-abc123"}},
            ],
        },
        {"role": "assistant", "content": "Silence, and a short paper."},
    ]
    imported = parse_import(json.dumps(messages), "openai")
    audio, paper = _files(imported)
    # The format says mp3; the bytes are a WAV, and the bytes win.
    assert (audio.name, audio.media_type) == ("audio.mp3", "audio/wav")
    assert _bytes_of(imported, audio) == wav_bytes()
    assert (paper.name, paper.media_type) == ("paper.pdf", "application/pdf")
    assert _bytes_of(imported, paper) == pdf_bytes()
    user = imported.entries[0].message
    assert user is not None and TextContent("[file: file-abc123]") in user.content


@pytest.mark.parametrize(
    ("part", "reason"),
    [
        (
            {"type": "input_audio", "input_audio": {"data": _b64(b"plain text"), "format": "wav"}},
            "not an image, audio file or PDF",
        ),
        ({"type": "input_audio", "input_audio": {"data": "@@not base64@@"}}, "base64"),
        ({"type": "file", "file": {"file_data": "https://example.invalid/a.pdf"}}, "data URL"),
        ({"type": "input_audio", "input_audio": "wav"}, "must be an object"),
    ],
)
def test_openai_bad_files_are_refused_naming_the_message(part: dict, reason: str) -> None:
    messages = [{"role": "user", "content": [part]}]
    with pytest.raises(FormatError) as caught:
        parse_import(json.dumps(messages), "openai")
    assert reason in str(caught.value) and "\n" not in str(caught.value)


def test_openai_files_only_in_user_messages() -> None:
    part = {"type": "input_audio", "input_audio": {"data": _b64(wav_bytes()), "format": "wav"}}
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [part]}]
    with pytest.raises(FormatError, match="only supported in user messages"):
        parse_import(json.dumps(messages), "openai")


# --- Claude Code -----------------------------------------------------------------


def _claude_line(number: int, parent: int | None, kind: str, message: dict) -> str:
    return json.dumps(
        {
            "parentUuid": f"c3000000-0000-4000-8000-{parent:012d}" if parent else None,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/ada/papers",
            "sessionId": SESSION,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": f"c3000000-0000-4000-8000-{number:012d}",
            "timestamp": f"2026-02-10T12:00:0{number}.000Z",
            "message": message,
        }
    )


def _document(data: bytes, title: str | None = None) -> dict:
    block: dict = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": _b64(data)},
    }
    if title is not None:
        block["title"] = title
    return block


def _claude_session(user_document: dict) -> str:
    reply = {
        "model": "claude-sonnet-4-5-20250929",
        "id": "msg_01DDDDDDDDDDDDDDDDDDDDDD",
        "type": "message",
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "b.pdf"}}
        ],
        "stop_reason": "tool_use",
    }
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_01",
        "content": [_document(pdf_bytes("Second"))],
    }
    lines = [
        _claude_line(
            1,
            None,
            "user",
            {"role": "user", "content": [{"type": "text", "text": "Compare these"}, user_document]},
        ),
        _claude_line(2, 1, "assistant", reply),
        _claude_line(3, 2, "user", {"role": "user", "content": [result]}),
    ]
    return "\n".join(lines) + "\n"


def test_claude_code_documents_are_kept_from_the_user_and_from_a_tool() -> None:
    imported = parse_import(_claude_session(_document(pdf_bytes(), "a.pdf")), "claude")
    attached, read = _files(imported)
    assert (attached.name, attached.media_type) == ("a.pdf", "application/pdf")
    assert _bytes_of(imported, attached) == pdf_bytes()
    # The document the Read tool returned follows its tool result.
    assert (read.name, read.media_type) == ("document.pdf", "application/pdf")
    assert _bytes_of(imported, read) == pdf_bytes("Second")
    roles = [e.message.role for e in imported.entries if e.message is not None]
    assert roles == ["user", "assistant", "tool_result", "user"]
    result = imported.entries[2].message
    assert result is not None and isinstance(result.content[0], ToolResultContent)


def test_claude_code_a_text_named_pdf_is_refused_with_its_line() -> None:
    with pytest.raises(FormatError) as caught:
        parse_import(_claude_session(_document(b"just text", "fake.pdf")), "claude")
    assert caught.value.line == 1
    assert "fake.pdf: not an image, audio file or PDF" in str(caught.value)


# --- pi (a Tangents export read back) ------------------------------------------------


def _blob(data: bytes, media_type: str) -> Blob:
    return Blob(hashlib.sha256(data).hexdigest(), media_type, 0, 0, data)


def test_pi_export_of_audio_and_a_pdf_imports_back_with_their_bytes() -> None:
    audio, paper = _blob(wav_bytes(), "audio/wav"), _blob(pdf_bytes(), "application/pdf")
    user = Message(
        role="user",
        content=(
            TextContent("Listen and read"),
            FileContent(audio.media_type, audio.sha256, "clip.wav", len(audio.data)),
            FileContent(paper.media_type, paper.sha256, "paper.pdf", len(paper.data)),
        ),
    )
    entry_id = "019a0000-0000-7000-8000-0000000000e1"
    entry = Entry(entry_id, None, SESSION, "message", "2026-03-01T10:00:00.000000Z", user)
    info = SessionInfo(SESSION, "Files", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", entry_id)
    text = to_pi_jsonl(info, [entry], {}, {audio.sha256: audio, paper.sha256: paper})
    imported = parse_import(text, "pi")
    [back] = [e.message for e in imported.entries if e.message is not None]
    assert back is not None and back.content == user.content
    assert {b.sha256: b.data for b in imported.blobs} == {
        audio.sha256: audio.data,
        paper.sha256: paper.data,
    }
    # A file whose bytes were left out is refused, not kept as a dangling block.
    stripped = text.replace(f'"{paper.sha256}": "{_b64(paper.data)}"', '"x": "AA=="')
    assert stripped != text
    with pytest.raises(FormatError, match="paper.pdf"):
        parse_import(stripped, "pi")
