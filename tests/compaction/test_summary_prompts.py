"""Transcripts and summary prompts: pure functions."""

from __future__ import annotations

import pytest

from core.compaction.plan import (
    TOOL_TEXT_LIMIT,
    Budget,
    budget_for,
    merge_summaries,
    prompts,
    serialize_transcript,
    should_compact,
    summary_prompt,
    turn_prefix_prompt,
)
from core.sessions.content import ThinkingContent
from core.sessions.entries import BranchSummary, ModelChange
from core.sessions.messages import Message
from core.settings import CompactionSettings
from tests.compaction.builders import assistant, call, chain, image, result, user

SECTIONS = (
    "## Goal",
    "## Constraints and preferences",
    "## Progress",
    "### Done",
    "### In progress",
    "### Blocked",
    "## Key decisions",
    "## Next steps",
    "## Critical context",
)


def test_transcript_shows_every_kind_of_message_as_text() -> None:
    path = chain(
        ModelChange("openai/gpt-x"),
        user("look at this", image(1, 640, 480)),
        Message(
            role="assistant",
            content=(ThinkingContent("hmm, a chart"),)
            + assistant("Reading it.", call("c1", "read_file", path="notes.txt")).content,
            stop_reason="tool_use",
        ),
        result("c1", "line one\nline two"),
        result("c2", "no such file", error=True),
        assistant("It says line one.", stop="aborted"),
        BranchSummary(None, "tried another approach"),
        Message(role="custom", content=()),
    )
    text = serialize_transcript(path)
    assert text.split("\n\n") == [
        "[User]: [image: image/png 640x480]\nlook at this",
        "[Assistant thinking]: hmm, a chart",
        "[Assistant]: Reading it.",
        '[Assistant tool calls]: read_file(path="notes.txt")',
        "[Tool result]: line one\nline two",
        "[Tool error]: no such file",
        "[Assistant]: It says line one.",
        "[This reply was stopped by the user]",
        "[Summary of another branch the user explored]: tried another approach",
    ]


def test_long_tool_output_is_clipped_and_old_parts_dropped_to_fit() -> None:
    text = serialize_transcript(chain(result("c1", "x" * 50_000)))
    assert len(text) < TOOL_TEXT_LIMIT + 100 and "more characters" in text
    path = chain(*(user(f"message {i} " + "m" * 1000) for i in range(20)))
    fitted = serialize_transcript(path, max_chars=5_000)
    assert len(fitted) <= 5_200
    assert "message 19" in fitted and "message 0 " not in fitted
    assert fitted.startswith("[... 16 earlier message(s) left out")


def test_first_summary_prompt_asks_for_the_sections() -> None:
    prompt = summary_prompt("[User]: hi")
    assert prompt.startswith("<conversation>\n[User]: hi\n</conversation>")
    for section in SECTIONS:
        assert section in prompt
    assert "<previous-summary>" not in prompt and "Additional focus" not in prompt


def test_update_prompt_carries_the_previous_summary_and_the_focus() -> None:
    prompt = summary_prompt("[User]: more", previous_summary="## Goal\nShip it", focus="the parser")
    assert "<previous-summary>\n## Goal\nShip it\n</previous-summary>" in prompt
    assert "PRESERVE" in prompt
    for section in SECTIONS:
        assert section in prompt
    assert prompt.endswith("Additional focus for this summary, from the user: the parser")


def test_turn_prefix_prompt_and_merge() -> None:
    prompt = turn_prefix_prompt("[User]: fix it")
    assert "BEGINNING of one turn" in prompt and "## Original request" in prompt
    assert merge_summaries("HISTORY", None) == "HISTORY"
    assert merge_summaries("HISTORY", "PREFIX") == "HISTORY" + prompts.SPLIT_TURN_JOINER + "PREFIX"
    assert merge_summaries(None, "PREFIX").startswith(prompts.NO_PRIOR_HISTORY)


@pytest.mark.parametrize(
    ("window", "reserve", "keep", "expected"),
    [
        (200_000, 16_384, 20_000, Budget(200_000, 16_384, 20_000)),
        # the caps scale with the window: a quarter reserved, at most a third kept
        (32_768, 16_384, 20_000, Budget(32_768, 8_192, 10_922)),  # the demo
        (8_192, 16_384, 20_000, Budget(8_192, 2_048, 2_730)),  # a small local model
        (4_096, 16_384, 20_000, Budget(4_096, 1_024, 1_365)),  # SmolLM2 on llama.cpp
        (3_000, 16_384, 20_000, Budget(3_000, 750, 1_000)),
    ],
)
def test_budget_fits_small_windows(window, reserve, keep, expected) -> None:
    budget = budget_for(window, CompactionSettings(reserve_tokens=reserve, keep_recent_tokens=keep))
    assert budget == expected
    assert budget.keep_recent_tokens <= budget.threshold // 2


def test_should_compact_only_over_the_threshold_and_when_enabled() -> None:
    on = CompactionSettings()
    budget = budget_for(200_000, on)
    assert not should_compact(budget.threshold, budget, on)
    assert should_compact(budget.threshold + 1, budget, on)
    assert not should_compact(10**9, budget, CompactionSettings(enabled=False))
