"""Files on each provider's wire, within the budget, for models that take them."""

from __future__ import annotations

import base64

from core.providers import anthropic_format, openai_format
from core.providers.capabilities import refusal
from core.sessions.content import FileContent, TextContent
from core.sessions.context import build_context
from core.sessions.entries import Entry
from core.sessions.messages import Message, user_text
from core.settings import Endpoint, Settings

WAV = FileContent("audio/wav", "a" * 64, "clip.mp3", 100)
MP3 = FileContent("audio/mpeg", "b" * 64, "song.mp3", 100)
OGG = FileContent("audio/ogg", "c" * 64, "voice.ogg", 100)
PDF = FileContent("application/pdf", "d" * 64, "paper.pdf", 100)
BYTES = {f.sha256: f.sha256[:1].encode() * 3 for f in (WAV, MP3, OGG, PDF)}


def test_openai_parts_for_each_kind() -> None:
    [wire] = openai_format.convert([user_text("hear", (WAV, MP3, OGG, PDF))], BYTES)
    wav, mp3, ogg, pdf, text = wire["content"]
    assert wav == {"type": "input_audio", "input_audio": {"data": "YWFh", "format": "wav"}}
    assert mp3["input_audio"]["format"] == "mp3"
    assert ogg == {
        "type": "file",
        "file": {"filename": "voice.ogg", "file_data": "data:audio/ogg;base64,Y2Nj"},
    }
    assert pdf["file"]["file_data"] == "data:application/pdf;base64," + base64.b64encode(
        b"ddd"
    ).decode("ascii")
    assert text == {"type": "text", "text": "hear"}


def test_a_file_without_bytes_is_a_note() -> None:
    [wire] = openai_format.convert([user_text("hear", (WAV,))], {})
    assert wire["content"] == "[file unavailable: clip.mp3, audio/wav, 0.0 MB]\nhear"


def test_anthropic_takes_a_pdf_as_a_cached_document_and_notes_audio() -> None:
    [turn] = anthropic_format.to_messages((user_text("", (WAV, PDF)),), BYTES)
    note, document = turn["content"]
    assert note == {"type": "text", "text": "[file not sent: clip.mp3, audio/wav, 0.0 MB]"}
    assert document == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": "ZGRk"},
        "cache_control": {"type": "ephemeral"},
    }


def _path(*messages: Message) -> list[Entry]:
    path: list[Entry] = []
    for message in messages:
        entry = Entry.new("s", path[-1].id if path else None, message)
        path.append(entry)
    return path


def test_only_the_latest_files_of_each_kind_go_as_data() -> None:
    older = FileContent("audio/wav", "e" * 64, "old.wav", 100)
    path = _path(
        user_text("1", (older, PDF)),
        Message(role="assistant", content=(TextContent("a"),)),
        user_text("2", (WAV, WAV)),
        Message(role="assistant", content=(TextContent("b"),)),
        user_text("3", (MP3, OGG)),
    )
    context = build_context(path, "openai/gpt-audio", image_budget=3)
    assert set(context.file_shas) == {PDF.sha256, WAV.sha256, MP3.sha256, OGG.sha256}
    first, _, second, _, _ = context.messages
    assert first.content[0] == TextContent("[file omitted: old.wav, audio/wav, 0.0 MB]")
    assert first.content[1] == PDF
    assert second.content[0] == TextContent("[file omitted: clip.mp3, audio/wav, 0.0 MB]")
    assert second.content[1] == WAV, "a repeated file goes once, at its latest place"


def test_which_models_take_which_kinds() -> None:
    settings = Settings()
    assert refusal("openai/gpt-audio", ["audio"], settings) is None
    assert refusal("anthropic/claude-sonnet-4-5", ["pdf", "image"], settings) is None
    line = refusal("anthropic/claude-sonnet-4-5", ["pdf", "audio"], settings)
    assert line is not None and "audio" in line and "\n" not in line
    assert refusal("openai/some-unknown-model", ["audio", "pdf"], settings) is None
    lab = Settings(endpoints=(Endpoint("lab", "http://127.0.0.1:9/v1", accepts=("image",)),))
    assert refusal("lab/x", ["image"], lab) is None
    assert "lab/x does not take audio" in (refusal("lab/x", ["audio"], lab) or "")
    tried = Settings(endpoints=(Endpoint("lab", "http://127.0.0.1:9/v1"),))
    assert refusal("lab/x", ["audio", "pdf"], tried) is None
