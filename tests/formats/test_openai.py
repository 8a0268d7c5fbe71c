"""OpenAI chat-completions messages: export of a branch, import as a linear
session, and the round trip between them."""

from __future__ import annotations

import base64
import hashlib
import io
import json

import pytest
from hypothesis import given, settings

from core.formats import FormatError, detect_format, parse_import
from core.formats.openai import from_openai_messages, to_openai_messages
from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.context import BRANCH_END, BRANCH_PREFIX, SUMMARY_END, SUMMARY_PREFIX
from core.sessions.entries import BranchSummary, Compaction, Entry, ModelChange, entry_type_of
from core.sessions.messages import Message
from core.sessions.persistence import Blob
from tests.strategies import conversation_paths


def _png() -> Blob:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 20, 30)).save(out, "PNG")
    data = out.getvalue()
    return Blob(hashlib.sha256(data).hexdigest(), "image/png", 4, 3, data)


def _path(*payloads) -> list[Entry]:
    entries: list[Entry] = []
    for i, payload in enumerate(payloads):
        entries.append(
            Entry(
                f"e{i}",
                entries[-1].id if entries else None,
                "s",
                entry_type_of(payload),
                f"2026-01-01T00:00:{i:02d}.000000Z",
                payload,
            )
        )
    return entries


BLOB = _png()
IMAGE = ImageContent(BLOB.media_type, BLOB.sha256, BLOB.width, BLOB.height)
MISSING = ImageContent("image/jpeg", "f" * 64, 800, 600)
DATA_URL = "data:image/png;base64," + base64.b64encode(BLOB.data).decode()


def test_export_is_what_the_next_request_sends() -> None:
    """From issue #14: the summaries were dropped (three user messages in a row).
    From issue #33: a summary shares its user message with what follows it."""
    path = _path(
        Message("system", (TextContent("Be brief."),)),
        ModelChange("openai/gpt-x", "high"),
        Message("user", (TextContent("What is this?"), IMAGE, MISSING)),
        Message(
            "assistant",
            (
                ThinkingContent("hmm", "sig"),
                TextContent("Let me look."),
                ToolCallContent("call_1", "read", {"p": 1}, '{"p": 1}'),
                ToolCallContent("call_2", "shot", {}, ""),
            ),
        ),
        Message(
            "tool_result",
            (
                ToolResultContent("call_1", (TextContent("42"),)),
                ToolResultContent("call_2", (TextContent("no"), IMAGE), is_error=True),
            ),
        ),
        Message("custom", (TextContent("a note for the user only"),)),
        Compaction("summary", "e2", 100),
        BranchSummary(None, "went elsewhere"),
        Message("assistant", (ThinkingContent("only thinking"),), stop_reason="aborted"),
        Message("assistant", (TextContent("A dark picture."),), stop_reason="stop"),
    )
    out = to_openai_messages(path, {BLOB.sha256: BLOB})
    assert (
        out
        == [
            {"role": "system", "content": "Be brief."},
            {  # the image is sent once, where it was seen last (the image budget)
                "role": "user",
                "content": SUMMARY_PREFIX + "summary" + SUMMARY_END + "\nWhat is this?\n"
                "[image omitted: image/png 4x3]\n[image unavailable: image/jpeg 800x600]",
            },
            {
                "role": "assistant",
                "content": "Let me look.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"p": 1}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "shot", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "42"},
            {
                "role": "tool",
                "tool_call_id": "call_2",
                "content": "Error: no\n[image image/png 4x3 attached below]",
            },
            {  # the tool's image and the branch summary: one user turn
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": DATA_URL}},
                    {"type": "text", "text": BRANCH_PREFIX + "went elsewhere" + BRANCH_END},
                ],
            },
            {"role": "assistant", "content": "A dark picture."},
        ]
    )
    without_bytes = to_openai_messages(path)
    assert without_bytes[2] == out[2]
    assert without_bytes[4]["content"] == "Error: no\n[image unavailable: image/png 4x3]"
    assert without_bytes[5] == {
        "role": "user",
        "content": BRANCH_PREFIX + "went elsewhere" + BRANCH_END,
    }


def test_summaries_come_back_as_summaries_and_never_as_the_title() -> None:
    """From issue #14: a branch summary, re-imported, became the session title."""
    path = _path(
        Message("user", (TextContent("first question"),)),
        Message("assistant", (TextContent("first answer"),)),
        Compaction("what happened", "e3", 100),
        Message("user", (TextContent("kept question"),)),
        Message("assistant", (TextContent("kept answer"),)),
        BranchSummary(None, "went elsewhere"),
        Message("user", (TextContent("and now?"),)),
    )
    out = to_openai_messages(path)
    assert [m["content"] for m in out] == [
        SUMMARY_PREFIX + "what happened" + SUMMARY_END + "\nkept question",
        "kept answer",
        BRANCH_PREFIX + "went elsewhere" + BRANCH_END + "\nand now?",
    ]
    imported = from_openai_messages(json.loads(json.dumps(out)))
    assert [e.type for e in imported.entries] == [
        "compaction",
        "message",
        "message",
        "branch_summary",
        "message",
    ]
    assert imported.info.title == "kept question"
    assert to_openai_messages(list(imported.entries)) == out


def test_import_maps_roles_tool_calls_results_and_images() -> None:
    messages = [
        {"role": "developer", "content": "Be brief."},
        {
            "role": "user",
            "name": "ada",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": DATA_URL, "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "thinking...",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path": "a"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "bad", "arguments": '{"path": '},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "contents of a"},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": [{"type": "text", "text": "bad json"}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "refusal": None},
    ]
    text = json.dumps(messages, indent=2)
    assert detect_format(text) == "openai"
    imported = parse_import(text)
    entries = imported.entries
    assert [e.parent_id for e in entries] == [None] + [e.id for e in entries[:-1]]
    assert imported.info.leaf_id == entries[-1].id and imported.info.title == "What is this?"
    roles = [e.message.role for e in entries]
    assert roles == ["system", "user", "assistant", "tool_result", "tool_result", "assistant"]
    assert entries[0].message.meta == {"openai": {"role": "developer"}}
    user = entries[1].message
    assert user.content[1] == IMAGE and user.content[2] == TextContent(
        "[image: https://example.com/cat.png]"
    )
    assert user.meta == {"openai": {"name": "ada"}}
    assert imported.blobs == (BLOB,)
    assistant = entries[2].message
    assert assistant.content[0] == ThinkingContent("thinking...")
    assert assistant.tool_calls == [
        ToolCallContent("call_1", "read", {"path": "a"}, '{"path": "a"}'),
        ToolCallContent("call_2", "bad", {}, '{"path": '),
    ]
    assert entries[3].message.content == (
        ToolResultContent("call_1", (TextContent("contents of a"),)),
    )
    assert entries[4].message.tool_results[0].text == "bad json"
    assert entries[5].message.meta == {"openai": {"refusal": None}}
    assert imported.counts()["messages"] == 6


def test_a_request_body_is_accepted_too() -> None:
    body = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}]}
    assert detect_format(json.dumps(body)) == "openai"
    assert parse_import(json.dumps(body)).entries[0].message.text == "hi"


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (
            {"role": "tool", "tool_call_id": "call_9", "content": "x"},
            "tool_call_id 'call_9' answers no earlier tool call",
        ),
        ({"role": "wizard", "content": "x"}, "unknown role 'wizard'"),
        ({"role": "function", "name": "f", "content": "x"}, "legacy function messages"),
        ({"role": "user", "content": [{"type": "input_audio"}]}, "input_audio must be an object"),
        ({"role": "user", "content": [{"type": "video_url"}]}, "unsupported type 'video_url'"),
        ({"role": "user", "content": 5}, "content must be"),
        (
            {
                "role": "assistant",
                "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": 5}}],
            },
            "arguments must be a JSON string",
        ),
        (
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
                ],
            },
            "not a readable PNG, JPEG, GIF or WebP image",
        ),
    ],
)
def test_malformed_messages_are_refused_with_their_line(message: dict, reason: str) -> None:
    messages = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
        message,
    ]
    text = json.dumps(messages, indent=2)
    with pytest.raises(FormatError) as caught:
        parse_import(text, "openai")
    assert reason in caught.value.reason and caught.value.reason.startswith("message 3: ")
    starts = [number for number, line in enumerate(text.split("\n"), 1) if line == "  {"]
    assert caught.value.line == starts[2]


@pytest.mark.parametrize(
    ("text", "line"), [('[\n{"role": "user"}\n', 3), ('{"a": 1', 1), ("[]", 1), ("5", 1)]
)
def test_bad_json_or_empty_input(text: str, line: int) -> None:
    with pytest.raises(FormatError) as caught:
        parse_import(text, "openai")
    assert caught.value.line == line


@settings(max_examples=200, deadline=None)
@given(conversation_paths())
def test_export_import_export_is_identical(path: list[Entry]) -> None:
    exported = to_openai_messages(path)
    if not exported:
        return
    imported = from_openai_messages(json.loads(json.dumps(exported)))
    assert to_openai_messages(list(imported.entries)) == exported


def test_an_export_from_before_summaries_had_an_end_is_read_as_before() -> None:
    imported = from_openai_messages(
        [
            {"role": "user", "content": SUMMARY_PREFIX + "old summary\n\nwith two lines"},
            {"role": "user", "content": "the question"},
        ]
    )
    compaction, question = (e.payload for e in imported.entries)
    assert (
        isinstance(compaction, Compaction) and compaction.summary == "old summary\n\nwith two lines"
    )
    assert isinstance(question, Message) and question.text == "the question"
