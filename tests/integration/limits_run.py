"""Running ``tangents -p`` against the fake provider's hostile modes with
small limits, and reading what it saved (tests of issue 37)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

from tests.integration.cli import (
    CANARY_OPENAI,
    anthropic_env,
    export,
    openai_env,
    outcome_lines,
    run,
    sessions,
)

CLAUDE = "anthropic/claude-test"
GPT = "openai/gpt-test"
LM_STUDIO = "lm_studio/local-test"
"""Sent by litellm through the ``openai`` SDK (the OpenAI wire)."""
OLLAMA = "ollama_chat/llama-test"
"""Sent by litellm with its own HTTP handler (Ollama's wire)."""
GEMINI = "gemini/gemini-test"
"""Sent by litellm with its own HTTP handler (Gemini's wire)."""
BOUND = 48 * 1024 * 1024
"""More than a bounded read lets through (its limit and the socket buffers),
far less than the fake server sends a client that reads on."""
HANG = 3600.0
"""A stall no limit of these tests waits for."""


def configure(home: Path, **limits: float) -> Path:
    config = home / "config.toml"
    config.write_text("".join(f"{name} = {value}\n" for name, value in limits.items()))
    return config


def ask(home: Path, fake, model: str, *extra: str, wrapper: Sequence[str] = (), **limits: float):
    config = configure(home, **limits)
    env = anthropic_env(fake.base_url) if model == CLAUDE else openai_env()
    if model == GEMINI:
        env["GEMINI_API_KEY"] = CANARY_OPENAI
    base = {
        CLAUDE: (),
        OLLAMA: ("--api-base", fake.base_url),
        GEMINI: ("--api-base", fake.base_url),
    }.get(model, ("--api-base", f"{fake.base_url}/v1"))
    return run(
        "--db",
        str(home / "t.db"),
        "--config",
        str(config),
        "-m",
        model,
        *base,
        *extra,
        "-p",
        "tell me",
        env=env,
        timeout=90,
        wrapper=wrapper,
    )


def one_line(result) -> str:
    """The single line print mode ended with on stderr."""
    lines = outcome_lines(result.stderr)
    assert result.returncode == 1, result.stderr
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("tangents: ")
    return lines[0]


def saved_reply(home: Path) -> dict:
    """The assistant message the run saved, after checking the database is sound."""
    with closing(sqlite3.connect(home / "t.db")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    [listed] = sessions(home / "t.db")
    doc = export(home / "t.db", listed["id"])
    messages = [e["payload"] for e in doc["entries"] if e["type"] == "message"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    return messages[1]


def text_of(message: dict) -> str:
    return "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")


FULL = "echo: tell me " + " ".join(f"word{i}" for i in range(40))
