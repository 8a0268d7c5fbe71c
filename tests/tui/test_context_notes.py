"""A message the model no longer sees whole is marked on its row, for as long
as that is true (issue 33 item 1): not a toast that vanishes. A 4,096-token
window, a 1,500-word answer, then more questions."""

from __future__ import annotations

import re

from fake_local_server import LocalServer

from tests.fake_provider import FakeProvider, Reply
from tests.tui.helpers import app_of, running, screen_text, settle, wait_for
from tui.widgets.message_widget import MessageWidget

BIG = " ".join(f"bigword{i}" for i in range(1500))


async def send_pasted(pilot, text: str) -> None:
    pilot.app.screen.prompt.insert(text)
    await pilot.press("enter")
    await settle(pilot)


def big_reply_id(pilot) -> str:
    path = app_of(pilot).conversation.session.path
    return next(e.id for e in path if e.message is not None and e.message.text == BIG)


async def big_row(pilot) -> MessageWidget:
    row = await pilot.app.screen.chat_view.scroll_to_entry(big_reply_id(pilot))
    assert row is not None
    await settle(pilot)
    return row


async def test_a_shortened_reply_says_so_on_its_row_and_keeps_saying_it() -> None:
    with FakeProvider(local=LocalServer("vllm", 4_096)) as server:
        argv = ["--model", "openai/smollm2", "--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            await send_pasted(pilot, "hello there")
            server.script_for("smollm2", Reply(text=BIG, chunk_size=4_000))
            await send_pasted(pilot, "BIG-ONE tell me 1500 words")
            await send_pasted(pilot, "what was the 100th word of the big answer?")
            row = await big_row(pilot)
            await wait_for(lambda: "sent shortened" in screen_text(pilot), pilot)
            assert "words from the middle of this reply left out" in screen_text(pilot)
            # Another exchange later, it is still said (no toast to miss).
            await send_pasted(pilot, "and the 200th?")
            row = await big_row(pilot)
            assert row.context_note is not None and "sent shortened" in row.context_note


async def test_older_messages_sent_as_stubs_say_so_on_their_rows(tmp_path) -> None:
    """Compaction off on a 2,048-token window: twelve exchanges cannot fit even
    shortened, so older messages go as stubs and the oldest are counted on
    one line of the request; their rows say which, and keep saying it."""
    config = tmp_path / "config.toml"
    config.write_text("[compaction]\nenabled = false\n")
    padding = " ".join(f"pad{i}" for i in range(60))
    with FakeProvider(local=LocalServer("vllm", 2_048)) as server:
        argv = ["--config", str(config), "--model", "openai/smollm2"]
        argv += ["--api-base", f"{server.base_url}/v1"]
        async with running(argv) as pilot:
            for i in range(12):
                await send_pasted(pilot, f"question {i} start {padding} end")
            notes = pilot.app.screen.context_notes
            path = app_of(pilot).conversation.session.path
            asked = [e.id for e in path if e.message and e.message.text.startswith("question")]
            said = [notes.note(entry_id) or "" for entry_id in asked]
            assert said[0].startswith("left out of the request to fit the context window")
            assert any(note.startswith("sent as a stub") for note in said)
            stub = asked[next(i for i, note in enumerate(said) if note.startswith("sent as a"))]
            row = await pilot.app.screen.chat_view.scroll_to_entry(stub)
            assert row is not None
            await wait_for(lambda: "sent as a stub" in screen_text(pilot), pilot)
            messages = server.last_request.body["messages"]
            assert messages[-1]["content"] == f"question 11 start {padding} end"  # whole
            sent = "\n".join(str(m.get("content")) for m in messages)
            assert re.search(r"\[\d+ earlier messages left out to fit the context window", sent)
            # Another exchange later, the row still says it (no toast to miss).
            await send_pasted(pilot, "one more")
            row = await pilot.app.screen.chat_view.scroll_to_entry(asked[0])
            assert row is not None and row.context_note is not None
