"""``tangents -p ... -a FILE``: audio, images and PDFs reach the model in its
own wire format, and a model that cannot take a kind is refused before
anything is sent or saved."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fake_provider import Reply

from tests.attachments.samples import pdf_bytes, png_bytes, wav_bytes, write
from tests.integration.cli import anthropic_env, export, openai_env, outcome_lines, run, sessions


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def openai_run(fake_provider, db: Path, model: str, *args: str):
    return run(
        "--db",
        str(db),
        "-m",
        model,
        "--api-base",
        fake_provider.base_url + "/v1",
        *args,
        env=openai_env(),
    )


def last_user_parts(fake_provider) -> list[dict[str, Any]]:
    return fake_provider.last_request.body["messages"][-1]["content"]


def saved_entries(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM entries").fetchone()[0]


def test_a_wav_named_mp3_goes_as_input_audio_in_wav_format(fake_provider, db, tmp_path) -> None:
    clip = write(tmp_path / "clip.mp3", wav_bytes())
    fake_provider.script(Reply(text="silence"))
    result = openai_run(fake_provider, db, "openai/gpt-audio", "-p", "transcribe", "-a", str(clip))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "silence\n"
    parts = last_user_parts(fake_provider)
    [audio] = [p for p in parts if p["type"] == "input_audio"]
    assert audio["input_audio"]["format"] == "wav"
    assert base64.b64decode(audio["input_audio"]["data"]) == wav_bytes()
    assert {"type": "text", "text": "transcribe"} in parts
    [listed] = sessions(db)
    user = next(e["payload"] for e in export(db, listed["id"])["entries"] if e["type"] == "message")
    [file] = [b for b in user["content"] if b["type"] == "file"]
    assert (file["name"], file["media_type"]) == ("clip.mp3", "audio/wav")


def test_an_image_is_sent_as_an_image(fake_provider, db, tmp_path) -> None:
    dot = write(tmp_path / "dot.png", png_bytes())
    fake_provider.script(Reply(text="a red dot"))
    result = openai_run(fake_provider, db, "openai/gpt-4o", "-p", "what?", "--attach", str(dot))
    assert result.returncode == 0, result.stderr
    [image] = [p for p in last_user_parts(fake_provider) if p["type"] == "image_url"]
    assert image["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_pdf_goes_to_claude_as_a_document(fake_provider, db, tmp_path) -> None:
    paper = write(tmp_path / "paper.pdf", pdf_bytes())
    fake_provider.script(Reply(text="a short paper"))
    result = run(
        "--db",
        str(db),
        "-m",
        "anthropic/claude-sonnet-4-5",
        "-p",
        "summarise",
        "-a",
        str(paper),
        env=anthropic_env(fake_provider.base_url),
    )
    assert result.returncode == 0, result.stderr
    blocks = fake_provider.last_request.body["messages"][-1]["content"]
    [document] = [b for b in blocks if b["type"] == "document"]
    assert document["source"]["type"] == "base64"
    assert document["source"]["media_type"] == "application/pdf"
    assert base64.b64decode(document["source"]["data"]) == pdf_bytes()


def test_a_pdf_goes_to_an_openai_model_as_a_file(fake_provider, db, tmp_path) -> None:
    paper = write(tmp_path / "paper.pdf", pdf_bytes())
    fake_provider.script(Reply(text="ok"))
    result = openai_run(fake_provider, db, "openai/gpt-4o", "-p", "read", "-a", str(paper))
    assert result.returncode == 0, result.stderr
    [part] = [p for p in last_user_parts(fake_provider) if p["type"] == "file"]
    assert part["file"]["filename"] == "paper.pdf"
    assert part["file"]["file_data"].startswith("data:application/pdf;base64,")


def test_audio_to_a_model_without_audio_input_is_refused_before_anything(
    fake_provider, db, tmp_path
) -> None:
    clip = write(tmp_path / "clip.wav", wav_bytes())
    result = openai_run(fake_provider, db, "openai/gpt-4o", "-p", "transcribe", "-a", str(clip))
    assert result.returncode == 2
    [line] = outcome_lines(result.stderr)
    assert "audio" in line and "openai/gpt-4o" in line
    assert fake_provider.requests == []
    assert saved_entries(db) == 0


def test_a_configured_endpoint_says_what_it_accepts(fake_provider, db, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[[endpoints]]\n"
        'name = "lab"\n'
        f'base_url = "{fake_provider.base_url}/v1"\n'
        'models = ["omni"]\n'
        'accepts = ["image", "audio"]\n'
    )
    args = ("--db", str(db), "--config", str(config), "-m", "lab/omni", "-p", "hear this")
    refused = run(*args, "-a", str(write(tmp_path / "paper.pdf", pdf_bytes())))
    assert refused.returncode == 2
    [line] = refused.stderr.splitlines()
    assert "pdf" in line.lower() and "lab/omni" in line
    assert fake_provider.requests == []
    fake_provider.script(Reply(text="heard"))
    result = run(*args, "-a", str(write(tmp_path / "clip.wav", wav_bytes())))
    assert result.returncode == 0, result.stderr
    assert any(p["type"] == "input_audio" for p in last_user_parts(fake_provider))


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        ("paper.pdf", lambda path: path.write_bytes(b"plain text, not a PDF"), "not an image"),
        ("cut.mp3", lambda path: path.write_bytes(b"ID3\x04\x00\x00\x7f\x7f\x7f\x7f"), "truncated"),
        ("huge.wav", lambda path: _sparse(path, wav_bytes()[:44], 2 * 1024**3), "too large"),
        ("missing.wav", lambda path: None, "no such file"),
    ],
)
def test_hostile_files_are_refused_in_one_line(
    fake_provider, db, tmp_path, name, make, reason
) -> None:
    path = tmp_path / name
    make(path)
    result = openai_run(fake_provider, db, "openai/gpt-audio", "-p", "hi", "-a", str(path))
    assert result.returncode == 2
    [line] = outcome_lines(result.stderr)
    assert name in line and reason in line
    assert "Traceback" not in result.stderr
    assert fake_provider.requests == []
    assert saved_entries(db) == 0


def _sparse(path: Path, head: bytes, size: int) -> None:
    path.write_bytes(head)
    with path.open("r+b") as file:
        file.truncate(size)


def test_attach_without_print_mode_is_refused_not_ignored(tmp_path) -> None:
    clip = write(tmp_path / "clip.wav", wav_bytes())
    result = run("--db", str(tmp_path / "t.db"), "-a", str(clip))
    assert result.returncode == 2
    assert result.stderr.strip() == "tangents: -a goes with -p (tangents -p 'a question' -a FILE)"


def test_the_json_export_carries_the_file_and_imports_back(fake_provider, db, tmp_path) -> None:
    clip = write(tmp_path / "clip.wav", wav_bytes())
    fake_provider.script(Reply(text="heard"))
    assert (
        openai_run(fake_provider, db, "openai/gpt-audio", "-p", "hi", "-a", str(clip)).returncode
        == 0
    )
    [listed] = sessions(db)
    document = export(db, listed["id"])
    [blob] = document["blobs"]
    assert blob["media_type"] == "audio/wav"
    assert base64.b64decode(blob["data"]) == wav_bytes()
    saved = tmp_path / "session.json"
    saved.write_text(json.dumps(document))
    other = tmp_path / "other.db"
    imported = run("--db", str(other), "sessions", "import", str(saved))
    assert imported.returncode == 0, imported.stderr
    [again] = sessions(other)
    assert export(other, again["id"])["blobs"] == document["blobs"]
