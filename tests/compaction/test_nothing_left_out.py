"""The summarizer sees everything it summarizes, one request at a time
(issues #32 and #33): a split turn's two summaries are asked one after the
other, and a transcript over the summarizing model's window is summarized in
parts, each part updating the summary of the parts before it."""

from __future__ import annotations

import re

from fake_provider import Reply, Stall

from core.compaction.run import compact
from core.sessions.messages import user_text
from core.settings import CompactionSettings, Settings
from tests.compaction.builders import assistant, call, result
from tests.compaction.conftest import Rig, sent_texts
from tests.compaction.test_end_to_end import chat, small_window, words


async def test_the_summaries_of_a_split_turn_are_asked_one_at_a_time(rig: Rig, session) -> None:
    settings = small_window(rig, keep_recent_tokens=400)
    await chat(session, range(2))
    await session.append_many(
        [
            user_text("fix the parser please"),
            assistant("step one " + words(400, 1), call("c1")),
            result("c1", "R1 " + words(3000, 2)),
            assistant("step two " + words(400, 3), call("c2")),
            result("c2", "R2 " + words(1200, 4)),
            assistant("step three", call("c3")),
            result("c3", "R3 done"),
        ]
    )
    # The first answer is slow: a second request sent meanwhile would overlap it.
    rig.server.script(Stall(0.5, reply=Reply(text="HISTORY")), Reply(text="PREFIX"))
    entry = await compact(
        session, settings, model=rig.model, summarizer=rig.summarizer(settings), trigger="auto"
    )
    assert entry.payload.details["split_turn"] is True
    assert len(rig.bodies) == 2
    assert rig.server.most_at_once == 1, "a single-slot server would cut one of them off"


BIG = " ".join(f"bigword{i}" for i in range(3000))  # ~30,000 characters


async def test_a_transcript_over_the_summarizing_window_is_summarized_in_parts(
    rig: Rig, session
) -> None:
    settings = Settings(
        retries=0,
        compaction=CompactionSettings(reserve_tokens=1_000, keep_recent_tokens=300),
        context_windows={rig.model: 4_096},
    )
    await session.append_many(
        [
            user_text("u0 BIG-ONE tell me everything"),
            assistant(BIG),
            user_text("u1 what was the 100th word?"),
            assistant("a1 bigword99"),
            user_text("u2 thanks"),
        ]
    )
    rig.server.script(*[Reply(text=f"SUMMARY {n}") for n in range(1, 20)])
    entry = await compact(session, settings, model=rig.model, summarizer=rig.summarizer(settings))

    asked = [sent_texts(body)[0] for body in rig.bodies]
    assert len(asked) > 1, "one request cannot hold the transcript"
    seen = " ".join(text.split("</conversation>")[0] for text in asked)
    assert set(re.findall(r"bigword\d+", seen)) == set(BIG.split()), "every word was summarized"
    assert "left out" not in seen
    # Each part updates the summary of the parts before it.
    for n, text in enumerate(asked[1:], 1):
        assert f"<previous-summary>\nSUMMARY {n}\n</previous-summary>" in text
    assert entry.payload.summary == f"SUMMARY {len(asked)}"
    assert rig.server.most_at_once == 1
