"""Print mode meets values no well-behaved server sends: one line on stderr,
exit code 1, and the reply saved as far as it came, never a traceback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from fake_provider import RawStream

from tests.integration.cli import anthropic_env, export, run, sessions
from tests.providers.test_provider_values import sse_anthropic, sse_openai

CLAUDE = "anthropic/claude-test"
TEXT = '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'
SO_FAR = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"so far"}}'


@pytest.mark.parametrize(
    "wire, body",
    [
        (
            "anthropic",
            sse_anthropic(
                TEXT,
                SO_FAR,
                '{"type":"content_block_start","index":1,'
                '"content_block":{"type":"tool_use","id":5,"name":"f","input":{}}}',
            ),
        ),
        ("openai", sse_openai('{"content":"so far"}', '{"content":["not","text"]}')),
        ("openai", sse_openai('{"content":"so far"}', finish="{}")),
        ("openai", sse_openai('{"content":"so far \\ud800"}', usage='{"prompt_tokens":1e400}')),
    ],
    ids=["integer-tool-id", "content-list", "finish-object", "surrogate-and-huge-usage"],
)
def test_a_bad_value_is_one_line_and_the_reply_is_kept(
    fake_provider, tmp_path: Path, wire: str, body: str
) -> None:
    db = tmp_path / "t.db"
    fake_provider.script(RawStream(body))
    if wire == "anthropic":
        args, env = ["-m", CLAUDE], anthropic_env(fake_provider.base_url)
    else:
        args = ["-m", "openai/gpt-4o", "--api-base", fake_provider.base_url + "/v1"]
        env = {"OPENAI_API_KEY": "sk-test-0000000000000000"}
    result = run("--db", str(db), *args, "-p", "hello", env=env)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.startswith("so far")
    [listed] = sessions(db)
    reply = export(db, listed["id"])["entries"][-1]["payload"]
    assert reply["role"] == "assistant" and reply["stop_reason"] == "error"
    assert reply["content"][0]["text"].startswith("so far")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = run("--db", str(db), "-c", "-m", "demo", "-p", "still there?")
    assert again.returncode == 0, again.stderr
