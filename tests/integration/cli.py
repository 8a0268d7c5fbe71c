"""Run the real ``tangents`` program as a subprocess, the way a user would."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CANARY_ANTHROPIC = "sk-ant-CANARY-0123456789abcdef"
CANARY_OPENAI = "sk-CANARY-0123456789abcdefghij"


def tangents_command() -> list[str]:
    found = shutil.which("tangents")
    return [found] if found else [sys.executable, "-m", "tui.cli"]


def run(
    *args: str,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
    wrapper: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """The real ``tangents`` with ``args``; ``wrapper`` goes before it."""
    return subprocess.run(
        [*wrapper, *tangents_command(), *args],
        capture_output=True,
        text=True,
        input=input,
        timeout=timeout,
        # A crash in C code (seen once in CI: -11 after a complete answer) then
        # says where, in the stderr the assertions show.
        env={**os.environ, "PYTHONFAULTHANDLER": "1", **(env or {})},
    )


WAIT_LINE = re.compile(r"tangents: (waiting for the first token|no data from the server) · \d+ s")
"""What print mode says on stderr while a slow server keeps it waiting."""


def outcome_lines(stderr: str) -> list[str]:
    """Print mode's stderr lines without the waiting lines a slow (loaded)
    machine adds before the outcome."""
    return [line for line in stderr.strip().splitlines() if not WAIT_LINE.fullmatch(line)]


def anthropic_env(base_url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": CANARY_ANTHROPIC}


def openai_env() -> dict[str, str]:
    return {"OPENAI_API_KEY": CANARY_OPENAI}


def sessions(db: Path) -> list[dict[str, Any]]:
    result = run("--db", str(db), "sessions", "list", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def export(db: Path, session_id: str) -> dict[str, Any]:
    result = run("--db", str(db), "sessions", "export", session_id, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def request_texts(body: dict[str, Any]) -> list[str]:
    """Every text of an OpenAI-style request body, message by message."""
    out: list[str] = []
    for message in body["messages"]:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        else:
            out += [part.get("text", "") for part in content or []]
    return out
