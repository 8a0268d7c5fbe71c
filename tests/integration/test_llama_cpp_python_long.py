"""Done-when of issue 32: a long conversation with a llama-cpp-python server
as it behaves by default (window said nowhere, an overflowing stream that
just ends, a new request cutting off the running one, no usage), through
print mode with ``-c`` and default settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_local_server import LocalServer

from core.compaction import prompts
from tests.fake_provider import FakeProvider
from tests.integration.cli import run

WORDS = "the garden by the sea has cats and a long wall of old stones ".split()


def question(number: int) -> str:
    """About 140 words; with an answer of about 110, an exchange of about 250."""
    return f"question {number}: " + " ".join(WORDS[(number + i) % len(WORDS)] for i in range(140))


def is_summary(body: dict) -> bool:
    return any(prompts.SYSTEM[:60] in str(m.get("content")) for m in body.get("messages", []))


@pytest.mark.slow
def test_sixteen_exchanges_on_a_4k_window_are_all_answered_whole(tmp_path: Path) -> None:
    local = LocalServer("llama-cpp-python", 4_096, reply_chars=700)
    with FakeProvider(local=local) as server:
        base = ["--db", str(tmp_path / "t.db"), "--model", "openai/smollm2"]
        base += ["--api-base", server.base_url + "/v1"]
        said: list[str] = []
        for number in range(16):
            done = run(*base, *(["-c"] if number else []), "-p", question(number))
            assert done.returncode == 0, (number, done.stderr)
            assert done.stdout.strip().startswith("echo: question"), done.stdout
            said += done.stderr.splitlines()
        bodies = [r.body for r in server.requests if isinstance(r.body, dict)]
    summaries = [b for b in bodies if is_summary(b)]
    assert [line for line in said if line.startswith("tangents: compacted")], said
    assert summaries and all(b.get("max_tokens") for b in summaries)
    assert local.interrupted == 0, "a request cut off another"
    assert local.cut_replies == 0, "an answer outgrew the window"
    assert local.refused <= 2, local.refused
