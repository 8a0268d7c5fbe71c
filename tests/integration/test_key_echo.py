"""A server that quotes part of the key in its error gets none of it saved or
shown (issue 37): any run of six or more characters of the key in use is
redacted from the error text, for every kind of client."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_provider import Fail

from tests.integration.cli import CANARY_ANTHROPIC, CANARY_OPENAI, run

ECHOED = 13
"""How much of the key the server quotes back, as a real API did."""


@pytest.mark.parametrize(
    ("model", "key_name", "key"),
    [
        ("openai/smollm2", "OPENAI_API_KEY", CANARY_OPENAI),
        ("anthropic/claude-test", "ANTHROPIC_API_KEY", CANARY_ANTHROPIC),
    ],
)
@pytest.mark.parametrize(
    "message",
    [
        "Incorrect API key provided: {prefix}*******. Find your key at the dashboard.",
        "key {middle} is not valid",
    ],
)
def test_a_key_quoted_in_an_error_is_neither_saved_nor_shown(
    fake_provider, tmp_path: Path, model: str, key_name: str, key: str, message: str
) -> None:
    db = tmp_path / "data" / "t.db"
    quoted = message.format(prefix=key[:ECHOED], middle=key[4:11])
    fake_provider.script(Fail(401, message=quoted))
    env = {key_name: key, "ANTHROPIC_BASE_URL": fake_provider.base_url}
    args = ["--db", str(db), "--model", model, "-p", "hi"]
    if model.startswith("openai/"):
        args[4:4] = ["--api-base", fake_provider.base_url + "/v1"]
    result = run(*args, env=env)
    assert result.returncode == 1, result.stderr
    assert "[redacted]" in result.stderr
    saved = db.read_bytes()
    for start in range(len(key) - 5):
        piece = key[start : start + 6]
        assert piece not in result.stderr
        assert piece.encode() not in saved
