"""/attach in the app: audio and PDFs go with the next message, shown as a
one-line card; a model that cannot take the kind refuses at attaching."""

from __future__ import annotations

from pathlib import Path

from core.sessions.content import FileContent
from tests.attachments.samples import pdf_bytes, wav_bytes, write
from tests.tui.helpers import app_of, notifications, running, screen_text, send
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
