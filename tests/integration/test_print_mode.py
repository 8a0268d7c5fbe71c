"""Print mode end to end: the real program, a real database, the fake provider."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from fake_provider import Fail, Reply

from tests.integration.cli import (
    CANARY_ANTHROPIC,
    CANARY_OPENAI,
    anthropic_env,
    export,
    openai_env,
    outcome_lines,
    run,
    sessions,
)

CLAUDE = "anthropic/claude-test"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def test_question_streams_to_stdout_and_is_saved(fake_provider, db) -> None:
    fake_provider.script(Reply(text="Paris is the capital."))
    result = run(
        "--db",
        str(db),
        "-m",
        CLAUDE,
        "-p",
        "Capital of France?",
        env=anthropic_env(fake_provider.base_url),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Paris is the capital.\n"
    [listed] = sessions(db)
    assert listed["title"] == "Capital of France?"
    assert listed["message_count"] == 2
    doc = export(db, listed["id"])
    messages = [e["payload"] for e in doc["entries"] if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["model"] == CLAUDE
    assert messages[1]["stop_reason"] == "stop"
    assert messages[1]["usage"]["output_tokens"] > 0
    assert doc["session"]["leaf_id"] == doc["entries"][-1]["id"]


def test_continue_latest_session_sends_the_history(fake_provider, db) -> None:
    env = anthropic_env(fake_provider.base_url)
    assert run("--db", str(db), "-m", CLAUDE, "-p", "first", env=env).returncode == 0
    result = run("--db", str(db), "-c", "-p", "second", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "echo: second"
    [listed] = sessions(db)
    assert listed["message_count"] == 4
    sent = fake_provider.last_request.body["messages"]
    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0].get("text") for m in sent
    ]
    assert texts == ["first", "echo: first", "second"]


def test_continue_given_session_and_branch_from_an_earlier_entry(fake_provider, db) -> None:
    env = anthropic_env(fake_provider.base_url)
    run("--db", str(db), "-m", CLAUDE, "-p", "one", env=env)
    [listed] = sessions(db)
    run("--db", str(db), "--session", listed["id"], "-p", "two", env=env)
    doc = export(db, listed["id"])
    first_answer = [
        e for e in doc["entries"] if e["type"] == "message" and e["payload"]["role"] == "assistant"
    ][0]
    result = run("--db", str(db), "--from", first_answer["id"], "-p", "two, again", env=env)
    assert result.returncode == 0, result.stderr
    doc = export(db, listed["id"])
    children = [e for e in doc["entries"] if e["parent_id"] == first_answer["id"]]
    assert len(children) == 2, "the earlier continuation stays, the new one is a sibling"
    by_id = {e["id"]: e for e in doc["entries"]}
    node, depth = by_id[doc["session"]["leaf_id"]], 0
    while node["parent_id"]:
        node, depth = by_id[node["parent_id"]], depth + 1
    assert depth < len(doc["entries"])
    assert fake_provider.last_request.body["messages"][-1]["content"][0]["text"] == "two, again"
    assert len(fake_provider.last_request.body["messages"]) == 3


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_unknown_session_or_foreign_entry_is_a_clear_error_and_writes_nothing(
    fake_provider, db
) -> None:
    env = anthropic_env(fake_provider.base_url)
    run("--db", str(db), "-m", CLAUDE, "-p", "a", env=env)
    run("--db", str(db), "-m", CLAUDE, "-p", "b", env=env)
    first, second = sessions(db)
    entry_of_first = export(db, first["id"])["entries"][0]["id"]
    before = _digest(db)
    result = run("--db", str(db), "--session", "no-such-id", "-p", "x", env=env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "no-such-id" in result.stderr
    result = run(
        "--db", str(db), "--session", second["id"], "--from", entry_of_first, "-p", "x", env=env
    )
    assert result.returncode == 2
    assert "not part of session" in result.stderr
    assert [s["message_count"] for s in sessions(db)] == [2, 2]
    assert (
        _digest(db) == before
        or sqlite3.connect(db).execute("select count(*) from entries").fetchone()[0] == 6
    )


@pytest.mark.parametrize("status", [401, 500])
def test_provider_error_is_one_line_without_key_and_keeps_the_question(
    fake_provider, db, tmp_path, status
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("retries = 0\n")
    fake_provider.script(Fail(status=status))
    result = run(
        "--db",
        str(db),
        "--config",
        str(config),
        "-m",
        CLAUDE,
        "-p",
        "keep me",
        env=anthropic_env(fake_provider.base_url),
    )
    assert result.returncode == 1
    assert len(outcome_lines(result.stderr)) == 1, result.stderr
    assert CANARY_ANTHROPIC not in result.stderr + result.stdout
    assert ("key" in result.stderr) if status == 401 else ("server error" in result.stderr)
    [listed] = sessions(db)
    doc = export(db, listed["id"])
    assert CANARY_ANTHROPIC not in str(doc)
    roles = [e["payload"]["role"] for e in doc["entries"] if e["type"] == "message"]
    assert roles[0] == "user"
    # The failed turn can be retried by continuing the session.
    result = run("--db", str(db), "-c", "-p", "again", env=anthropic_env(fake_provider.base_url))
    assert result.returncode == 0, result.stderr


def test_connection_refused_through_litellm(db, tmp_path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "config.toml"
    config.write_text("retries = 0\n")
    result = run(
        "--db",
        str(db),
        "--config",
        str(config),
        "-m",
        "openai/test",
        "--api-base",
        f"http://127.0.0.1:{port}/v1",
        "-p",
        "hello?",
        env=openai_env(),
    )
    assert result.returncode == 1
    assert "reach" in result.stderr or "connection" in result.stderr
    assert CANARY_OPENAI not in result.stderr
    assert sessions(db)[0]["message_count"] >= 1


def test_openai_compatible_endpoint_through_litellm(fake_provider, db) -> None:
    fake_provider.script(Reply(text="from an OpenAI-compatible server"))
    result = run(
        "--db",
        str(db),
        "-m",
        "openai/my-model",
        "--api-base",
        fake_provider.base_url + "/v1",
        "-p",
        "hi",
        env=openai_env(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from an OpenAI-compatible server\n"
    assert fake_provider.last_request.body["model"] == "my-model"


def test_system_prompt_is_sent_and_recorded(fake_provider, db) -> None:
    run(
        "--db",
        str(db),
        "-m",
        CLAUDE,
        "--system",
        "Answer in French.",
        "-p",
        "hi",
        env=anthropic_env(fake_provider.base_url),
    )
    system = fake_provider.last_request.body["system"]
    text = system if isinstance(system, str) else system[0]["text"]
    assert text == "Answer in French."


def test_prompt_from_stdin(fake_provider, db) -> None:
    result = run(
        "--db",
        str(db),
        "-m",
        CLAUDE,
        "-p",
        env=anthropic_env(fake_provider.base_url),
        input="from a pipe\n",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "echo: from a pipe"


def test_markdown_export(fake_provider, db) -> None:
    fake_provider.script(Reply(text="```python\nprint('hi')\n```"))
    run(
        "--db",
        str(db),
        "-m",
        CLAUDE,
        "-p",
        "code please",
        env=anthropic_env(fake_provider.base_url),
    )
    [listed] = sessions(db)
    result = run("--db", str(db), "sessions", "export", listed["id"], "--format", "markdown")
    assert result.returncode == 0
    assert "# code please" in result.stdout
    assert "## User" in result.stdout and "## Assistant (anthropic/claude-test)" in result.stdout
    assert "print('hi')" in result.stdout


def test_global_options_before_and_after_the_subcommand(fake_provider, db) -> None:
    run("--db", str(db), "-m", CLAUDE, "-p", "x", env=anthropic_env(fake_provider.base_url))
    before = run("--db", str(db), "sessions", "list")
    after = run("sessions", "list", "--db", str(db))
    assert before.returncode == after.returncode == 0
    assert before.stdout == after.stdout and "x" in before.stdout


def test_configured_endpoint_takes_its_key_from_the_named_variable(
    fake_provider, db, tmp_path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[[endpoints]]\n"
        'name = "lab"\n'
        f'base_url = "{fake_provider.base_url}/v1"\n'
        'api_key_env = "LAB_SERVER_TOKEN"\n'
        'models = ["qwen3"]\n'
    )
    fake_provider.script(Reply(text="from the lab server"))
    result = run(
        "--db",
        str(db),
        "--config",
        str(config),
        "-m",
        "lab/qwen3",
        "-p",
        "hi",
        env={"LAB_SERVER_TOKEN": "lab-secret-token-123"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from the lab server\n"
    request = fake_provider.last_request
    assert request.body["model"] == "qwen3"
    assert request.headers.get("authorization") == "Bearer lab-secret-token-123"
    assert "lab-secret-token-123" not in config.read_text() + db.read_bytes().decode("latin-1")


def test_thinking_level_is_sent_and_recorded(fake_provider, db) -> None:
    fake_provider.script(Reply(text="done", thinking="let me think", signature="sig-1"))
    result = run(
        "--db",
        str(db),
        "-m",
        CLAUDE,
        "--thinking",
        "medium",
        "-p",
        "think",
        env=anthropic_env(fake_provider.base_url),
    )
    assert result.returncode == 0, result.stderr
    assert fake_provider.last_request.body["thinking"]["budget_tokens"] == 8192
    [listed] = sessions(db)
    doc = export(db, listed["id"])
    changes = [e["payload"] for e in doc["entries"] if e["type"] == "model_change"]
    assert changes == [{"model": CLAUDE, "thinking": "medium"}]
    answer = [e["payload"] for e in doc["entries"] if e["type"] == "message"][-1]
    assert answer["content"][0] == {
        "type": "thinking",
        "text": "let me think",
        "signature": "sig-1",
        "redacted": False,
    }


def test_a_reply_over_the_tool_call_limit_exits_1_with_one_line(fake_provider, db) -> None:
    from fake_provider import ToolCall

    calls = [ToolCall("read_file", {"path": "README.md"}, id=f"c{i}") for i in range(60)]
    fake_provider.script(Reply(tool_calls=calls))
    result = run(
        "--db", str(db), "-m", CLAUDE, "-p", "read it many times",
        env=anthropic_env(fake_provider.base_url),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "max_calls_per_reply" in result.stderr.strip().splitlines()[-1]
    assert len(fake_provider.requests) == 1
