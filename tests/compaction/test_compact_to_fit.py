"""Never left out whole (issue 33 item 1): when what a turn would send does
not fit even shortened, the conversation compacts first (the summarizer sees
every older message), then the request is built again; where compaction
cannot run (switched off, the summarizer failing) the older messages go as
marked stubs. Through the fake provider with the real SDK clients.

Four pictures and ``image_budget = 6`` on a 5,000-token window: the
automatic compaction counts the three images a request usually carries, so
it does not run, yet the request holds four images and cannot fit.
"""

from __future__ import annotations

import hashlib
import re

from fake_provider import Fail, Reply

from core.chat.events import CompactionStarted
from core.chat.turn import run_turn
from core.sessions.content import ImageContent
from core.sessions.context import SUMMARY_PREFIX
from core.sessions.entries import Compaction
from core.sessions.messages import user_text
from core.sessions.persistence import Blob
from core.settings import CompactionSettings, Settings
from tests.compaction.builders import assistant
from tests.compaction.conftest import Rig, sent_texts
from tests.compaction.test_image_budget_wire import png, sent_images

QUESTION = "which picture was the darkest?"


def settings(rig: Rig, **compaction) -> Settings:
    return Settings(
        retries=0,
        image_budget=6,
        compaction=CompactionSettings(**compaction),
        context_windows={rig.model: 5_000},
    )


async def four_pictures(session) -> list[bytes]:
    images = [png(i) for i in range(4)]
    for i, data in enumerate(images):
        sha = hashlib.sha256(data).hexdigest()
        await session.store.put_blob(Blob(sha, "image/png", 8, 6 + i, data))
        await session.append_many(
            [
                user_text(f"picture {i} start", (ImageContent("image/png", sha, 8, 6 + i),)),
                assistant(f"seen picture {i}"),
            ]
        )
    await session.append(user_text(QUESTION))
    return images


async def test_the_conversation_compacts_before_anything_would_be_left_out(
    rig: Rig, session
) -> None:
    images = await four_pictures(session)
    rig.server.script(Reply(text="SUMMARY OF THE PICTURES"), Reply(text="the first"))
    compacting: list[str] = []

    result = await run_turn(
        session,
        settings(rig),
        model=rig.model,
        target=rig.target,
        emit=lambda e: isinstance(e, CompactionStarted) and compacting.append(e.trigger),
    )

    assert result.error is None and result.message.text == "the first"
    assert compacting == ["fit"]
    summary_body, chat_body = rig.bodies
    # The summarizer saw every message it summarized.
    asked = sent_texts(summary_body)[0]
    assert "picture 0 start" in asked and "seen picture 0" in asked
    # The request: the summary, then what it kept, the question whole; no stub, nothing left out.
    sent = sent_texts(chat_body)
    assert sent[0] == SUMMARY_PREFIX + "SUMMARY OF THE PICTURES"
    assert sent[-1] == QUESTION
    assert not [t for t in sent if "left out to fit" in t]
    assert sent_images(chat_body) == images[-len(sent_images(chat_body)) :]
    assert result.context.stubbed_messages == 0
    [entry] = result.compactions
    assert isinstance(entry.payload, Compaction) and entry.payload.details["trigger"] == "fit"
    assert not [note for note in result.notes if "stub" in note or "left out" in note]


async def stubbed_request(rig: Rig, result) -> str:
    assert result.error is None
    sent = "\n".join(sent_texts(rig.bodies[-1]))
    # Every earlier message is in the request, the picture that did not fit as a note.
    for i in range(4):
        assert f"picture {i} start" in sent and f"seen picture {i}" in sent
    assert re.search(r"\[image left out to fit the context window: image/png 8x\d+\]", sent)
    assert sent.endswith(QUESTION)
    assert result.context.stubbed_messages >= 1
    assert any("sent as stubs" in note for note in result.notes)
    return sent


async def test_with_compaction_off_older_messages_go_as_marked_stubs(rig: Rig, session) -> None:
    await four_pictures(session)
    rig.server.script(Reply(text="the first"))

    result = await run_turn(
        session, settings(rig, enabled=False), model=rig.model, target=rig.target
    )

    assert len(rig.bodies) == 1
    await stubbed_request(rig, result)
    assert not result.compactions


async def test_when_the_summarizer_fails_older_messages_go_as_marked_stubs(
    rig: Rig, session
) -> None:
    await four_pictures(session)
    rig.server.script(Fail(status=500), Reply(text="the first"))

    result = await run_turn(session, settings(rig), model=rig.model, target=rig.target)

    assert len(rig.bodies) == 2
    await stubbed_request(rig, result)
    assert not result.compactions
    assert any("compacting to fit the context window failed" in note for note in result.notes)
