"""Attached audio and PDFs in the exports: the HTML page plays the audio (read
in a real headless Chromium) and links the PDF, markdown names them as links,
and the JSON export carries their bytes and brings them back."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from core.formats.html import to_html
from core.formats.markdown import to_markdown
from core.formats.tangents_json import from_json_text, to_json_document
from core.sessions.content import FileContent, TextContent
from core.sessions.entries import Entry
from core.sessions.messages import Message
from core.sessions.persistence import Blob, SessionInfo
from tests.attachments.samples import pdf_bytes, wav_bytes
from tests.formats.browser import open_page

SESSION = "019a0000-0000-7000-8000-0000000000f0"
ONE_SECOND = 8000
"""Frames of :func:`wav_bytes` (8 kHz) in one second."""


def _blob(data: bytes, media_type: str) -> Blob:
    return Blob(hashlib.sha256(data).hexdigest(), media_type, 0, 0, data)


def _session(name: str = "clip.wav") -> tuple[SessionInfo, list[Entry], dict[str, Blob]]:
    audio = _blob(wav_bytes(ONE_SECOND), "audio/wav")
    paper = _blob(pdf_bytes(), "application/pdf")
    content = (
        TextContent("Listen and read"),
        FileContent(audio.media_type, audio.sha256, name, len(audio.data)),
        FileContent(paper.media_type, paper.sha256, 'paper "v2" <b>.pdf', len(paper.data)),
    )
    entry_id = "019a0000-0000-7000-8000-0000000000f1"
    entry = Entry(
        entry_id,
        None,
        SESSION,
        "message",
        "2026-03-01T10:00:00.000000Z",
        Message(role="user", content=content),
    )
    info = SessionInfo(SESSION, "Files", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00Z", entry_id)
    return info, [entry], {audio.sha256: audio, paper.sha256: paper}


def _duration_when_loaded() -> str:
    """A promise of the audio element's duration once its metadata loaded
    (rejected if the element cannot load its source)."""
    return (
        "new Promise(function (done, fail) { var a = document.querySelector('#chat audio');"
        " if (a.readyState >= 1) { done(a.duration); return; }"
        " a.addEventListener('loadedmetadata', function () { done(a.duration); });"
        " a.addEventListener('error', function () { fail('audio error ' + a.error.code); });"
        " })"
    )


async def test_the_html_page_plays_the_audio_and_links_the_pdf(tmp_path: Path) -> None:
    info, entries, blobs = _session()
    file = tmp_path / "session.html"
    file.write_text(to_html(info, entries, {}, blobs), encoding="utf-8")
    async with open_page(file, tmp_path / "profile") as page:
        result = await page.send(
            "Runtime.evaluate",
            expression=_duration_when_loaded(),
            awaitPromise=True,
            returnByValue=True,
        )
        assert "exceptionDetails" not in result, result
        assert abs(result["result"]["value"] - 1.0) < 0.01
        link = "document.querySelector('#chat a[download]')"
        assert await page.evaluate(f"{link}.getAttribute('download')") == 'paper "v2" <b>.pdf'
        href = await page.evaluate(f"{link}.href")
        assert href.startswith("data:application/pdf;base64,")
        assert base64.b64decode(href.split(",", 1)[1]) == pdf_bytes()
        assert await page.evaluate("document.querySelectorAll('#chat b').length") == 0
        assert await page.evaluate("performance.getEntriesByType('resource').length") == 0


def test_markdown_names_each_file_as_a_link() -> None:
    info, entries, _ = _session("my clip [1].wav")
    text = to_markdown(info, entries)
    assert "[my clip \\[1\\].wav](<my%20clip%20%5B1%5D.wav>)" in text
    assert '[paper "v2" \\<b\\>.pdf](<paper%20%22v2%22%20%3Cb%3E.pdf>)' in text
    assert "audio/wav" in text and "application/pdf" in text


def test_the_json_export_round_trips_the_files_and_their_bytes() -> None:
    info, entries, blobs = _session()
    document = to_json_document(info, entries, {}, blobs.values())
    imported = from_json_text(json.dumps(document))
    assert [e.payload for e in imported.entries] == [e.payload for e in entries]
    assert {b.sha256: b.data for b in imported.blobs} == {sha: b.data for sha, b in blobs.items()}
