"""``tangents sessions show``: the overview of a branched, compacted session,
as text and JSON, through the real program and a real database."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.sessions.ids import short_id
from storage import SqliteStore
from tests.formats.sample import sample_session
from tests.integration.cli import run


@pytest.fixture
def db(tmp_path: Path) -> Path:
    sample = sample_session()

    async def fill() -> None:
        store = await SqliteStore.open(tmp_path / "t.db")
        try:
            await store.import_session(
                sample.info, sample.entries, sample.labels, list(sample.blobs.values())
            )
        finally:
            await store.close()

    asyncio.run(fill())
    return tmp_path / "t.db"


def test_show_json_counts_the_whole_tree(db: Path) -> None:
    sample = sample_session()
    done = run("--db", str(db), "sessions", "show", sample.info.id, "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["title"] == "Trees for the garden"
    assert (shown["created_at"], shown["updated_at"]) == (
        sample.info.created_at,
        sample.info.updated_at,
    )
    assert shown["entries"] == 16 and shown["messages"] == 13
    assert shown["messages_by_role"] == {
        "system": 1,
        "user": 4,
        "assistant": 6,
        "tool_result": 1,
        "custom": 1,
    }
    assert shown["branches"] == 3
    assert [leaf["text"] for leaf in shown["leaves"]] == [
        "Birches like damp.",
        "Birches are fine anywhere.",
        "You are welcome </textarea>",
    ]
    assert shown["leaf_id"] == sample.ids["a4"] and shown["current_branch_entries"] == 11
    assert shown["position"] == "Pines <script>alert(1)</script> like sand."
    assert shown["compactions"] == [{"id": sample.ids["compaction"], "tokens_before": 1234}]
    assert shown["branch_summaries"] == 1 and shown["model_changes"] == 1
    assert shown["labels"] == {sample.ids["a2"]: "answer", sample.ids["u3"]: "pines"}
    by_model = {m["model"]: m for m in shown["usage_by_model"]}
    claude = by_model["anthropic/claude-x"]
    assert claude["replies"] == 5
    # Three replies carry usage (100 in, 20 out, 50 cache read, 10 cache write, 5 reasoning).
    assert (claude["input_tokens"], claude["output_tokens"]) == (300, 60)
    assert (claude["cache_read_tokens"], claude["cache_write_tokens"]) == (150, 30)
    assert claude["reasoning_tokens"] == 15
    assert claude["cost"]["total"] == pytest.approx(3 * 0.0033)
    assert by_model["openai/gpt-x"]["input_tokens"] == 40
    assert shown["usage_total"]["input_tokens"] == 340
    assert shown["tool_calls"] == {"read_file": 1} and shown["tool_errors"] == 0
    assert shown["images"] == 1


def test_show_text(db: Path) -> None:
    sample = sample_session()
    done = run("--db", str(db), "sessions", "show", sample.info.id)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("Trees for the garden\n")
    assert "created  2026-03-01 09:59:59" in text
    assert "entries  16 (13 messages:" in text
    assert "branches 3; the current one is 11 entries long" in text
    assert f"{short_id(sample.ids['compaction'])}  1,234 tokens before" in text
    assert f"{short_id(sample.ids['u3'])}  pines" in text
    assert "     anthropic/claude-x: 5 replies, $0.0099\n" in text
    assert (
        "       input 300 · output 60 · reasoning 15\n       cache read 150 · cache write 30\n"
        in text
    )
    assert "     total: 6 replies, $0.0111\n" in text
    assert "tool calls 1: read_file 1" in text


def test_show_unknown_session_is_one_line(db: Path) -> None:
    done = run("--db", str(db), "sessions", "show", "nope")
    assert done.returncode == 2 and done.stderr.strip() == "tangents: no session with id 'nope'"
