"""Compaction through the fake provider, with the real SDK clients: what the
summary request asks, and what the next request carries."""

from __future__ import annotations

import pytest
from fake_provider import Fail, Reply

from core.chat.events import CompactionStarted, Notice
from core.chat.turn import run_turn
from core.compaction import prompts
from core.compaction.run import CompactionError, compact
from core.sessions.context import SUMMARY_PREFIX, estimated_tokens
from core.sessions.entries import Compaction
from core.sessions.messages import user_text
from core.settings import CompactionSettings, Settings
from core.tokens import context_tokens
from tests.compaction.builders import assistant, call, result
from tests.compaction.conftest import Rig, sent_texts, system_text
from tests.context_texts import context_texts

PAD = 1596  # with "u0 " this makes ~1,600 characters, ~404 estimated tokens a message
_WORDS = (
    "river",
    "copper",
    "lantern",
    "orbit",
    "meadow",
    "quartz",
    "signal",
    "harbor",
    "velvet",
    "thistle",
)


def words(n: int, seed: int = 0) -> str:
    """``n`` characters of varied words: tokenizers count them about as the estimate does
    (a run of one letter would be a handful of tokens)."""
    out, i = [], seed
    while sum(len(w) + 1 for w in out) < n:
        out.append(f"{_WORDS[i % len(_WORDS)]}{i * 7 % 100}")
        i += 1
    return " ".join(out)[:n]


def small_window(rig: Rig, **compaction) -> Settings:
    """A 12,000-token window: compact above 9,000, keep ~1,200 (three messages) verbatim."""
    options = {"reserve_tokens": 3_000, "keep_recent_tokens": 1_200, **compaction}
    return Settings(
        retries=0, compaction=CompactionSettings(**options), context_windows={rig.model: 12_000}
    )


async def chat(session, turns: range, tag: str = "") -> None:
    payloads = []
    for i in range(turns.start, turns.stop):
        payloads += [
            user_text(f"{tag}u{i} " + words(PAD, i)),
            assistant(f"{tag}a{i} " + words(PAD, i + 50)),
        ]
    await session.append_many(payloads)


def markers(texts: list[str]) -> set[str]:
    return {t.split(" ", 1)[0] for t in texts}


async def test_automatic_compaction_sends_the_summary_and_the_kept_tail(rig: Rig, session) -> None:
    settings = small_window(rig)
    await chat(session, range(11))  # ~9,300 tokens with the next question: over the 9,000 threshold
    await session.append(user_text("u11 " + words(PAD, 11)))
    rig.server.script(Reply(text="SUMMARY ONE"), Reply(text="the answer"))
    compacting = []

    result = await run_turn(
        session,
        settings,
        model=rig.model,
        target=rig.target,
        emit=lambda e: isinstance(e, CompactionStarted) and compacting.append(e.trigger),
    )

    assert result.error is None and result.message.text == "the answer"
    assert compacting == ["auto"]
    summary_body, chat_body = rig.bodies
    # The summary request: the structured prompt over a transcript of the older messages.
    asked = sent_texts(summary_body)[0]
    assert "context summarization assistant" in system_text(summary_body)
    assert asked.startswith("<conversation>\n[User]: u0 ")
    for section in (
        "## Goal",
        "## Constraints and preferences",
        "## Progress",
        "## Key decisions",
        "## Next steps",
        "## Critical context",
    ):
        assert section in asked
    assert "[Assistant]: a9 " in asked and "u10 " not in asked
    # The next request: the summary, then the kept tail, none of the compacted messages.
    sent = sent_texts(chat_body)
    assert sent[0] == SUMMARY_PREFIX + "SUMMARY ONE"
    assert [t.split(" ", 1)[0] for t in sent[1:]] == ["u10", "a10", "u11"]
    # The entry: at the leaf before the answer, pointing at the first kept message.
    [entry] = result.compactions
    assert session.path[-2] == entry and session.path[-1] == result.entry
    assert isinstance(entry.payload, Compaction)
    kept = next(
        e for e in session.path if e.message is not None and e.message.text.startswith("u10 ")
    )
    assert entry.payload.first_kept_id == kept.id
    assert entry.payload.tokens_before > 9_000
    assert entry.payload.details["model"] == rig.model
    assert entry.payload.details["trigger"] == "auto"
    assert entry.payload.details["split_turn"] is False
    assert entry.payload.details["usage"]["output_tokens"] > 0
    # What the footer shows now: the answer's reported usage, well under the threshold.
    assert 0 < context_tokens(session, rig.model) == result.message.usage.total_tokens < 9_000
    # Persisted: a reopened session builds the same context.
    reopened = await type(session).open(session.store, session.id)
    assert [
        t.split(" ", 1)[0] for t in context_texts(reopened.context(rig.model).messages)[1:]
    ] == [
        "u10",
        "a10",
        "u11",
        "the",
    ]


async def test_no_compaction_under_the_threshold_or_when_disabled(rig: Rig, session) -> None:
    await chat(session, range(3))
    await session.append(user_text("u3 short"))
    result = await run_turn(session, small_window(rig), model=rig.model, target=rig.target)
    assert result.compactions == () and len(rig.bodies) == 1
    await chat(session, range(4, 14))
    await session.append(user_text("u14"))
    result = await run_turn(
        session, small_window(rig, enabled=False), model=rig.model, target=rig.target
    )
    assert result.compactions == () and len(rig.bodies) == 2
    # The safety net still keeps the request within window - reserve (the
    # messages sent shortened, a marker in each), and says so.
    assert result.context.shortened_messages > 0
    assert (
        estimated_tokens(result.context.messages) <= small_window(rig).compaction.reserve_tokens * 3
    )
    assert any("shortened to fit the context window" in note for note in result.notes)
    assert sent_texts(rig.bodies[-1])[-1] == "u14"


def wide(rig: Rig) -> Settings:
    """A 128k window: automatic compaction stays out of the way."""
    return Settings(retries=0, context_windows={rig.model: 128_000})


def overflow(rig: Rig) -> Fail:
    if rig.name == "anthropic":
        return Fail(
            400,
            body={
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
        )
    return Fail(
        400,
        body={
            "error": {
                "message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    )


async def test_context_overflow_compacts_once_and_retries(rig: Rig, session) -> None:
    settings = wide(rig)  # our count says it fits, the provider disagrees
    await chat(session, range(6))
    await session.append(user_text("u6 the question"))
    rig.server.script(
        overflow(rig), Reply(text="SUMMARY AFTER OVERFLOW"), Reply(text="answered after all")
    )
    compacting = []

    result = await run_turn(
        session,
        settings,
        model=rig.model,
        target=rig.target,
        emit=lambda e: isinstance(e, CompactionStarted) and compacting.append(e.trigger),
    )

    assert result.error is None, result.error
    assert result.message.text == "answered after all"
    assert compacting == ["overflow"]
    [entry] = result.compactions
    assert entry.payload.details["trigger"] == "overflow"
    first, summary, retry = rig.bodies
    assert "SUMMARY AFTER OVERFLOW" not in str(first) and "<conversation>" in sent_texts(summary)[0]
    sent = sent_texts(retry)
    assert sent[0] == SUMMARY_PREFIX + "SUMMARY AFTER OVERFLOW"
    assert sent[-1] == "u6 the question"
    assert "u0" not in markers(sent[1:])
    roles = [e.payload.role if e.message else e.type for e in session.path[-3:]]
    assert roles == ["user", "compaction", "assistant"], "the failed attempt is not saved"


async def test_overflow_again_after_compacting_is_reported_clearly(rig: Rig, session) -> None:
    await chat(session, range(6))
    await session.append(user_text("u6"))
    rig.server.script(overflow(rig), Reply(text="SUMMARY"), overflow(rig))
    result = await run_turn(session, wide(rig), model=rig.model, target=rig.target)
    assert result.error is not None and result.error.kind == "context_overflow"
    assert "still too long after compacting the conversation" in result.error.message
    assert len(rig.bodies) == 3 and len(result.compactions) == 1
    assert result.message.stop_reason == "error" and "still too long" in result.message.error


async def test_overflow_when_compacting_fails_too(rig: Rig, session) -> None:
    await chat(session, range(6))
    await session.append(user_text("u6"))
    rig.server.script(overflow(rig), Fail(500))
    result = await run_turn(session, wide(rig), model=rig.model, target=rig.target)
    assert result.error.kind == "context_overflow"
    assert "compacting the conversation failed too" in result.error.message
    assert "server error" in result.error.message
    assert result.compactions == () and not any(e.type == "compaction" for e in session.path)


async def test_a_failed_automatic_compaction_does_not_stop_the_turn(rig: Rig, session) -> None:
    await chat(session, range(12))
    await session.append(user_text("u12 " + words(PAD, 12)))
    rig.server.script(Fail(500), Reply(text="answered anyway"))
    result = await run_turn(session, small_window(rig), model=rig.model, target=rig.target)
    assert result.message.text == "answered anyway"
    assert any(
        n.startswith("automatic compaction failed: the summary request failed")
        for n in result.notes
    )
    assert result.compactions == ()


async def test_the_agent_loop_tells_the_user_a_compaction_failed(rig: Rig, session) -> None:
    from core.chat.agent import run_agent

    await chat(session, range(12))
    await session.append(user_text("u12 " + words(PAD, 12)))
    rig.server.script(Fail(500), Reply(text="answered anyway"))
    told: list[str] = []
    result = await run_agent(
        session,
        small_window(rig),
        model=rig.model,
        target=rig.target,
        emit=lambda e: isinstance(e, Notice) and told.append(e.text),
    )
    assert result.turns[-1].message.text == "answered anyway"
    failed = [n for n in told if n.startswith("automatic compaction failed")]
    assert len(failed) == 1 and failed[0] in result.turns[-1].notes


async def test_a_second_compaction_updates_the_first_summary(rig: Rig, session) -> None:
    settings = small_window(rig, keep_recent_tokens=800)  # two messages: cuts land on user messages
    await chat(session, range(8))
    rig.server.script(Reply(text="FIRST SUMMARY: the user wants a parser"))
    first = await compact(
        session, settings, model=rig.model, summarizer=rig.summarizer(settings), focus="the parser"
    )
    assert first.payload.details["focus"] == "the parser"
    assert (
        "Additional focus for this summary, from the user: the parser"
        in sent_texts(rig.bodies[-1])[0]
    )
    await chat(session, range(8, 16), tag="n")
    rig.server.script(Reply(text="SECOND SUMMARY: parser done, tests next"))

    second = await compact(session, settings, model=rig.model, summarizer=rig.summarizer(settings))

    asked = sent_texts(rig.bodies[-1])[0]
    assert (
        "<previous-summary>\nFIRST SUMMARY: the user wants a parser\n</previous-summary>" in asked
    )
    assert "PRESERVE" in asked, "the update prompt, not the first-summary prompt"
    transcript = asked.split("</conversation>")[0]
    assert "[User]: u7 " in transcript or "[Assistant]: a7 " in transcript, (
        "the first compaction's kept tail"
    )
    assert "u0 " not in transcript, "already in the first summary"
    assert second.payload.first_kept_id != first.payload.first_kept_id
    rig.server.script(Reply(text="ok"))
    await session.append(user_text("next"))
    await run_turn(session, wide(rig), model=rig.model, target=rig.target)
    sent = sent_texts(rig.bodies[-1])
    assert sent[0] == SUMMARY_PREFIX + "SECOND SUMMARY: parser done, tests next"
    assert not any("FIRST SUMMARY" in t for t in sent)


async def test_a_long_tool_turn_is_split_and_both_summaries_merged(rig: Rig, session) -> None:
    settings = small_window(rig, keep_recent_tokens=400)
    await chat(session, range(2))
    await session.append_many(
        [
            user_text("fix the parser please"),
            # (varied words: litellm refuses a stream that repeats one chunk, as an echo of "rrrr..." would)
            assistant("step one " + words(400, 1), call("c1")),
            result("c1", "R1 " + words(3000, 2)),
            assistant("step two " + words(400, 3), call("c2")),
            result("c2", "R2 " + words(1200, 4)),
            assistant("step three", call("c3")),
            result("c3", "R3 done"),
        ]
    )
    # Echo replies: each summary repeats its whole prompt, longer than what it
    # replaces, which a manual compaction refuses; the automatic trigger does not ask.
    entry = await compact(
        session, settings, model=rig.model, summarizer=rig.summarizer(settings), trigger="auto"
    )
    assert entry.payload.details["split_turn"] is True
    asked = [sent_texts(b)[0] for b in rig.bodies]
    prefix = next(a for a in asked if prompts.TURN_PREFIX in a)
    history = next(a for a in asked if prompts.TURN_PREFIX not in a)
    assert "[User]: fix the parser please" in prefix and "R1 " in prefix and "u0 " not in prefix
    assert "[User]: u0 " in history and "fix the parser" not in history
    assert prompts.SPLIT_TURN_JOINER in entry.payload.summary
    assert entry.payload.summary.index("echo:") < entry.payload.summary.index(
        prompts.SPLIT_TURN_JOINER
    )
    kept = next(e for e in session.path if e.id == entry.payload.first_kept_id)
    assert kept.message.role == "assistant"


async def test_compaction_model_setting_and_errors(rig: Rig, session) -> None:
    settings = Settings(
        retries=0,
        compaction=CompactionSettings(compaction_model=rig.model.replace("test", "cheap")),
    )
    await chat(session, range(3))
    rig.server.script(Reply(text="cheap summary"))
    entry = await compact(session, settings, model=rig.model, summarizer=rig.summarizer(settings))
    assert entry.payload.details["model"].endswith("cheap")
    assert rig.bodies[-1]["model"].endswith("cheap")
    rig.server.script(Reply(text=""))
    await chat(session, range(3, 6))
    with pytest.raises(CompactionError, match="empty summary"):
        await compact(session, settings, model=rig.model, summarizer=rig.summarizer(settings))
    assert session.path[-1].type == "message", "a failed compaction writes nothing"
