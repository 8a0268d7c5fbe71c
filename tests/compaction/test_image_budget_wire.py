"""The image budget in the outgoing request: only the most recent images go as
pixels; older ones become short notes. Through the fake provider."""

from __future__ import annotations

import base64
import hashlib
import io
import re

from PIL import Image

from core.chat.turn import run_turn
from core.sessions.content import ImageContent
from core.sessions.messages import user_text
from core.sessions.persistence import Blob
from core.settings import Settings
from tests.compaction.builders import assistant
from tests.compaction.conftest import Rig, sent_texts


def png(shade: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 6 + shade), (shade * 40, 10, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def sent_images(body) -> list[bytes]:
    """The image bytes in a request, in order (Anthropic image blocks or OpenAI data URLs)."""
    found = []
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "image":
                found.append(base64.b64decode(block["source"]["data"]))
            elif block.get("type") == "image_url":
                found.append(base64.b64decode(block["image_url"]["url"].split(",", 1)[1]))
    return found


async def test_only_the_last_three_images_are_sent_as_pixels(rig: Rig, session) -> None:
    images = [png(i) for i in range(5)]
    for i, data in enumerate(images):
        sha = hashlib.sha256(data).hexdigest()
        await session.store.put_blob(Blob(sha, "image/png", 8, 6 + i, data))
        await session.append_many(
            [
                user_text(f"picture {i}", (ImageContent("image/png", sha, 8, 6 + i),)),
                assistant(f"seen {i}"),
            ]
        )
    await session.append(user_text("compare them"))

    result = await run_turn(session, Settings(retries=0), model=rig.model, target=rig.target)

    assert result.error is None
    body = rig.bodies[-1]
    assert sent_images(body) == images[2:], "the three most recent, each once, in order"
    notes = re.findall(r"\[image omitted: [^\]]*\]", "\n".join(sent_texts(body)))
    assert notes == ["[image omitted: image/png 8x6]", "[image omitted: image/png 8x7]"]
