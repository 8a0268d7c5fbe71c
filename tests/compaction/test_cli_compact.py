"""``tangents sessions compact ID --focus TEXT``: the real program, a real
database, the fake provider. The conversation before it is written directly
(each run of the program imports an SDK: seconds)."""

from __future__ import annotations

from pathlib import Path

from fake_provider import Reply

from core.sessions.context import SUMMARY_PREFIX
from core.sessions.entries import ModelChange
from core.sessions.messages import Usage, user_text
from core.sessions.session import Session
from storage import SqliteStore
from tests.compaction.builders import assistant
from tests.compaction.conftest import sent_texts
from tests.integration.cli import anthropic_env, export, run

CLAUDE = "anthropic/claude-test"


async def conversation(db: Path, *questions: str) -> str:
    store = await SqliteStore.open(db)
    try:
        session = await Session.create(store)
        payloads: list = [ModelChange(CLAUDE)]
        for question in questions:
            answer = assistant(f"echo: {question}", usage=Usage(input_tokens=50, output_tokens=5))
            payloads += [user_text(question), answer.with_(model=CLAUDE)]
        await session.append_many(payloads)
        return session.id
    finally:
        await store.close()


async def test_compact_writes_the_entry_and_the_next_turn_sends_the_summary(
    fake_provider, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    detail = " with the details of the parser we are writing" * 20  # worth summarizing
    session_id = await conversation(
        db, "first question" + detail, "second question" + detail, "third question"
    )
    env = anthropic_env(fake_provider.base_url)
    fake_provider.script(Reply(text="CLI SUMMARY: the user asks three questions"))

    done = run("--db", str(db), "sessions", "compact", session_id, "--focus", "the parser", env=env)

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Compacted ") and session_id in done.stdout
    asked = sent_texts(fake_provider.last_request.body)[0]
    assert "[User]: first question" in asked and "[Assistant]: echo: second question" in asked
    assert "third question" not in asked, "the latest turn is kept verbatim"
    assert asked.endswith("Additional focus for this summary, from the user: the parser")
    doc = export(db, session_id)
    [entry] = [e for e in doc["entries"] if e["type"] == "compaction"]
    by_id = {e["id"]: e for e in doc["entries"]}
    assert doc["session"]["leaf_id"] == entry["id"]
    assert entry["payload"]["summary"] == "CLI SUMMARY: the user asks three questions"
    assert (
        by_id[entry["payload"]["first_kept_id"]]["payload"]["content"][0]["text"]
        == "third question"
    )
    assert entry["payload"]["details"]["focus"] == "the parser"
    assert entry["payload"]["details"]["model"] == CLAUDE
    assert entry["payload"]["tokens_before"] == 55, "the last reply's reported usage"

    result = run("--db", str(db), "-c", "-p", "fourth question", env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "echo: fourth question\n"
    assert sent_texts(fake_provider.last_request.body) == [
        SUMMARY_PREFIX + "CLI SUMMARY: the user asks three questions",
        "third question",
        "echo: third question",
        "fourth question",
    ]


async def test_compact_errors_are_one_line(fake_provider, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    session_id = await conversation(db, "only one turn")
    env = anthropic_env(fake_provider.base_url)
    unknown = run("--db", str(db), "sessions", "compact", "no-such-session", env=env)
    assert (
        unknown.returncode == 2
        and unknown.stderr.count("\n") == 1
        and "no-such-session" in unknown.stderr
    )
    short = run("--db", str(db), "sessions", "compact", session_id, env=env)
    assert short.returncode == 1 and short.stderr.count("\n") == 1
    assert "nothing to compact" in short.stderr
    assert fake_provider.requests == [], "no summary was requested"
