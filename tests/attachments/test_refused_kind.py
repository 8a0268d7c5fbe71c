"""An attachment a local server refused stops being sent on that branch
(issue 32): a text-only llama-cpp-python model fails on every request that
carries an image, so one refusal is said in one line naming the kind,
recorded on the branch as a note, and later requests send a placeholder.
The image stays in the session for another model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_local_server import LocalServer
from PIL import Image

from core.chat.conversation import Conversation
from core.sessions.content import ImageContent
from core.sessions.file_attachments import load_attachment
from core.sessions.session import Session
from core.settings import Settings
from storage import SqliteStore
from tests.attachments.samples import pdf_bytes, wav_bytes
from tests.fake_provider import FakeProvider

MODEL = "openai/smollm2"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "t.db")
    yield opened
    await opened.close()


def image_parts(body: dict) -> int:
    return sum(
        1
        for message in body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )


async def test_a_refused_image_is_said_once_and_not_sent_again(store, tmp_path: Path) -> None:
    picture = tmp_path / "cat.png"
    Image.new("RGB", (64, 48), "orange").save(picture)
    local = LocalServer("llama-cpp-python", 8_192, text_only=True)
    with FakeProvider(local=local) as server:
        session = await Session.create(store, cwd="/")
        conversation = Conversation(
            session,
            Settings(retries=0, context_windows={MODEL: 8_192}),
            default_model=MODEL,
            default_thinking="off",
            api_base=server.base_url + "/v1",
        )
        first = await conversation.send("what is this?", [load_attachment(picture)])
        error = first.turns[-1].error
        assert error is not None and "refused the image" in str(error)
        assert "\n" not in str(error) and "could not reach" not in str(error)
        reply = session.path[-1].message
        assert reply.meta["refused_kind"] == "image" and reply.error == str(error)
        retried = await conversation.retry()  # as ctrl+r does: the failed reply leaves the path
        assert retried is not None and retried.turns[-1].error is None
        later = await conversation.send("then just say hello")
        assert later.turns[-1].error is None
    bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert [image_parts(b) for b in bodies] == [1, 0, 0]
    assert "image omitted" in str(bodies[1]["messages"])
    errors = [e.message.error for e in session.path if e.message and e.message.error]
    assert errors == [], "said once, by the reply that was refused"
    kept = [b for e in session.path if e.message for b in e.message.content]
    assert any(isinstance(b, ImageContent) for b in kept), "the image stays in the session"


async def test_a_resumed_session_remembers_the_refusal(store, tmp_path: Path) -> None:
    picture = tmp_path / "cat.png"
    Image.new("RGB", (64, 48), "orange").save(picture)
    local = LocalServer("llama-cpp-python", 8_192, text_only=True)
    with FakeProvider(local=local) as server:
        session = await Session.create(store, cwd="/")
        settings = Settings(retries=0, context_windows={MODEL: 8_192})
        base = server.base_url + "/v1"
        first = Conversation(
            session, settings, default_model=MODEL, default_thinking="off", api_base=base
        )
        await first.send("what is this?", [load_attachment(picture)])
        reopened = await Session.open(store, session.id)
        again = Conversation(
            reopened, settings, default_model=MODEL, default_thinking="off", api_base=base
        )
        assert (await again.send("hello")).turns[-1].error is None
    bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert [image_parts(b) for b in bodies] == [1, 0]


def parts_of(body: dict, kind: str) -> int:
    return sum(
        1
        for message in body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == kind
    )


SENT_AS = {"audio": "input_audio", "pdf": "file"}


def attachment(tmp_path: Path, kind: str) -> Path:
    if kind == "audio":
        path = tmp_path / "note.wav"
        path.write_bytes(wav_bytes())
    else:
        path = tmp_path / "paper.pdf"
        path.write_bytes(pdf_bytes())
    return path


@pytest.mark.parametrize("server_kind", ["llama-cpp-python", "llama.cpp"])
@pytest.mark.parametrize("kind", ["audio", "pdf"])
async def test_refused_audio_or_pdf_is_said_once_and_sent_as_a_note(
    store, tmp_path: Path, kind: str, server_kind: str
) -> None:
    """Each server refuses the part in its own words (HTTP 500 or 400): the
    reply says which kind, later requests send the placeholder, and a
    reopened session still does."""
    local = LocalServer(server_kind, 8_192, text_only=True)
    with FakeProvider(local=local) as server:
        session = await Session.create(store, cwd="/")
        settings = Settings(retries=0, context_windows={MODEL: 8_192})
        base = server.base_url + "/v1"
        conversation = Conversation(
            session, settings, default_model=MODEL, default_thinking="off", api_base=base
        )
        first = await conversation.send(
            "what is this?", [load_attachment(attachment(tmp_path, kind))]
        )
        error = first.turns[-1].error
        name = {"audio": "audio", "pdf": "PDF"}[kind]
        assert error is not None and f"refused the {name} it was sent" in str(error), error
        assert "\n" not in str(error) and "could not reach" not in str(error)
        assert session.path[-1].message.meta["refused_kind"] == kind
        later = await conversation.send("then just say hello")
        assert later.turns[-1].error is None
        reopened = await Session.open(store, session.id)
        again = Conversation(
            reopened, settings, default_model=MODEL, default_thinking="off", api_base=base
        )
        assert (await again.send("and goodbye")).turns[-1].error is None
    bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert [parts_of(b, SENT_AS[kind]) for b in bodies] == [1, 0, 0]
    assert "file omitted" in str(bodies[1]["messages"]) and "file omitted" in str(bodies[2])
    assert local.refused == 1


async def test_the_kind_a_server_names_is_the_one_marked(store, tmp_path: Path) -> None:
    """llama.cpp names what it cannot take: of an image and a recording sent
    together, only the kind named is left out; the other is tried next."""
    picture = tmp_path / "cat.png"
    Image.new("RGB", (64, 48), "orange").save(picture)
    local = LocalServer("llama.cpp", 8_192, text_only=True)
    with FakeProvider(local=local) as server:
        session = await Session.create(store, cwd="/")
        conversation = Conversation(
            session,
            Settings(retries=0, context_windows={MODEL: 8_192}),
            default_model=MODEL,
            default_thinking="off",
            api_base=server.base_url + "/v1",
        )
        both = [load_attachment(picture), load_attachment(attachment(tmp_path, "audio"))]
        first = await conversation.send("what are these?", both)
        assert "refused the image" in str(first.turns[-1].error)
        second = await conversation.send("and now?")
        assert "refused the audio" in str(second.turns[-1].error)
        assert (await conversation.send("hello")).turns[-1].error is None
    bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert [(image_parts(b), parts_of(b, "input_audio")) for b in bodies] == [
        (1, 1),
        (0, 1),
        (0, 0),
    ]


async def test_kinds_refused_together_are_all_left_out(store, tmp_path: Path) -> None:
    """llama-cpp-python's validation names every part it does not know, and an
    image too: both kinds are recorded on the reply, and a reopened session
    sends neither."""
    picture = tmp_path / "cat.png"
    Image.new("RGB", (64, 48), "orange").save(picture)
    local = LocalServer("llama-cpp-python", 8_192, text_only=True)
    with FakeProvider(local=local) as server:
        session = await Session.create(store, cwd="/")
        settings = Settings(retries=0, context_windows={MODEL: 8_192})
        base = server.base_url + "/v1"
        first = Conversation(
            session, settings, default_model=MODEL, default_thinking="off", api_base=base
        )
        both = [load_attachment(picture), load_attachment(attachment(tmp_path, "audio"))]
        error = (await first.send("what are these?", both)).turns[-1].error
        assert "refused the image and audio it was sent" in str(error), error
        assert session.path[-1].message.meta["refused_kind"] == ["image", "audio"]
        reopened = await Session.open(store, session.id)
        again = Conversation(
            reopened, settings, default_model=MODEL, default_thinking="off", api_base=base
        )
        assert (await again.send("hello")).turns[-1].error is None
    bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert [(image_parts(b), parts_of(b, "input_audio")) for b in bodies] == [(1, 1), (0, 0)]
