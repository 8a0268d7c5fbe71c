"""/attach and pasted (dropped) paths in the app: audio and PDFs go with the
next message, shown as a one-line card with their duration or pages that
Enter opens with the opener; a model that cannot take the kind refuses at
attaching."""

from __future__ import annotations

import base64
import stat
import tempfile
from pathlib import Path

import pytest
from fake_provider import Reply

from core.sessions.content import FileContent
from tests.attachments.samples import pdf_bytes, wav_bytes, write
from tests.tui.helpers import app_of, notifications, running, screen_text, send, wait_for
from tests.tui.test_attachments import paste
from tui.widgets._open_file import OpenError, open_file
from tui.widgets.file_card import FileCard
from tui.widgets.prompt_input import PromptInput


async def test_attach_audio_and_a_pdf_then_see_their_cards(tmp_path: Path) -> None:
    clip = write(tmp_path / "clip.mp3", wav_bytes())
    paper = write(tmp_path / "paper.pdf", pdf_bytes())
    async with running(size=(120, 60)) as pilot:  # the whole exchange on screen
        await send(pilot, f"/attach {clip}")
        await send(pilot, f"/image {paper}")  # the old name attaches any kind too
        composer = pilot.app.screen.composer
        assert [a.name for a in composer.attachments] == ["clip.mp3", "paper.pdf"]
        bar = str(pilot.app.screen.query_one("#attachments").render())
        assert "clip.mp3 (audio/wav" in bar and "paper.pdf (application/pdf" in bar
        await send(pilot, "listen and read")
        user = next(
            e.message
            for e in app_of(pilot).conversation.session.path
            if e.message and e.message.role == "user"
        )
        files = [b for b in user.content if isinstance(b, FileContent)]
        assert [(f.name, f.media_type) for f in files] == [
            ("clip.mp3", "audio/wav"),
            ("paper.pdf", "application/pdf"),
        ]
        shown = screen_text(pilot)
        assert "🔊 clip.mp3" in shown and "📄 paper.pdf" in shown, shown


async def test_a_model_without_audio_refuses_it_when_attaching(tmp_path: Path) -> None:
    clip = write(tmp_path / "clip.wav", wav_bytes())
    async with running(["--model", "openai/gpt-4o"]) as pilot:
        await send(pilot, f"/attach {clip}")
        assert pilot.app.screen.composer.attachments == []
        assert any("does not take audio" in n for n in notifications(pilot))
        assert pilot.app.screen.query_one(PromptInput).text == f"/attach {clip}"


def _opener(tmp_path: Path) -> tuple[Path, Path]:
    """A real opener: a script that copies the file it is given to ``opened``."""
    opened = tmp_path / "opened"
    script = tmp_path / "opener.sh"
    script.write_text(f'#!/bin/sh\ncp "$1" "{opened}"\n')
    script.chmod(0o755)
    return script, opened


async def test_pasted_audio_and_a_pdf_reach_the_model_and_enter_opens_a_card(
    tmp_path: Path, fake_provider, fake_args, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, opened = _opener(tmp_path)
    monkeypatch.setenv("TANGENTS_OPENER", str(script))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the copies opened land here
    clip = write(tmp_path / "clip.wav", wav_bytes(8000 * 65))
    paper = write(tmp_path / "dropped paper.pdf", pdf_bytes())
    fake_provider.script(Reply(text="Silence, and a short paper."))
    async with running(fake_args, size=(120, 60)) as pilot:
        await paste(pilot, f"'{clip}'")  # as a terminal pastes a dropped file
        await paste(pilot, paper.as_uri())
        composer = pilot.app.screen.composer
        assert [a.name for a in composer.attachments] == ["clip.wav", "dropped paper.pdf"]
        bar = str(pilot.app.screen.query_one("#attachments").render())
        assert "1:05" in bar and "1 page" in bar, bar
        await send(pilot, "listen and read")
        parts = fake_provider.last_request.body["messages"][-1]["content"]
        [audio] = [p for p in parts if p["type"] == "input_audio"]
        assert base64.b64decode(audio["input_audio"]["data"]) == wav_bytes(8000 * 65)
        [file] = [p for p in parts if p["type"] == "file"]
        assert file["file"]["filename"] == "dropped paper.pdf"
        shown = screen_text(pilot)
        assert "Silence, and a short paper." in shown
        assert "🔊 clip.wav, audio/wav, 1.0 MB, 1:05" in shown, shown
        assert "📄 dropped paper.pdf, application/pdf, 0.0 MB, 1 page" in shown, shown
        cards = list(pilot.app.screen.query(FileCard))
        cards[0].focus()
        await pilot.press("enter")
        await wait_for(lambda: opened.exists() and opened.stat().st_size > 0, pilot)
        assert opened.read_bytes() == wav_bytes(8000 * 65)


async def test_an_opener_that_fails_is_one_notification(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TANGENTS_OPENER", "false")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    paper = write(tmp_path / "paper.pdf", pdf_bytes())
    async with running(size=(120, 40)) as pilot:
        await send(pilot, f"/attach {paper}")
        await send(pilot, "read")
        pilot.app.screen.query_one(FileCard).focus()
        await pilot.press("enter")
        await wait_for(lambda: any("Could not open" in n for n in notifications(pilot)), pilot)
        [note] = [n for n in notifications(pilot) if "Could not open" in n]
        assert note == "Could not open paper.pdf: false exited with status 1"


def test_the_file_opened_is_private_and_named_safely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = open_file(b"%PDF-", "../../etc/\x1b[31mpasswd", "application/pdf", "true")
    assert path.parent.parent == tmp_path
    assert path.name == "[31mpasswd.pdf"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert open_file(b"x", "", "audio/wav", "true").name == "attachment.wav"
    with pytest.raises(OpenError, match="no no-such-opener here"):
        open_file(b"x", "a.wav", "audio/wav", "no-such-opener --flag")
    with pytest.raises(OpenError, match="does not parse"):
        open_file(b"x", "a.wav", "audio/wav", "'unclosed")
