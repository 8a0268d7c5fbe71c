"""The adversarial variants of tests/integration/test_body_limits.py (issue
37): more error statuses, more places for a line without end, gzip bombs on
every wire (the two direct ones, litellm's openai SDK route and two of the
routes it reads with its own HTTP handler). Run with ``TANGENTS_LONG_TESTS=1``; each ends in one line on
stderr with the reply saved, having read a bounded part."""

from __future__ import annotations

import pytest
from fake_provider import EndlessError, EndlessLine, GzipBomb

from tests.integration.limits_run import (
    BOUND,
    CLAUDE,
    FULL,
    GEMINI,
    GPT,
    LM_STUDIO,
    OLLAMA,
    ask,
    one_line,
    saved_reply,
    text_of,
)
from tests.long_suite import long_only

pytestmark = [
    pytest.mark.slow,
    long_only,
]
MODELS = [GPT, CLAUDE, LM_STUDIO, OLLAMA, GEMINI]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("after_chunks", [0, 1, 3, 20])
def test_a_line_without_end_anywhere_is_refused(tmp_path, fake_provider, model, after_chunks):
    fake_provider.script(EndlessLine(after_chunks=after_chunks))
    result = ask(tmp_path, fake_provider, model)
    assert "16 MB" in one_line(result)
    assert fake_provider.endless_bytes < 16 * 1024 * 1024 + BOUND
    assert FULL.startswith(text_of(saved_reply(tmp_path)))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_an_endless_error_body_of_any_status_is_read_in_part(
    tmp_path, fake_provider, model, status
):
    fake_provider.script(EndlessError(status))
    result = ask(tmp_path, fake_provider, model, "--max-time", "30")
    assert one_line(result)  # one line and exit code 1, whatever the status says
    assert fake_provider.endless_bytes < BOUND
    assert saved_reply(tmp_path)["stop_reason"] == "error"


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("status", [400, 404])
def test_a_gzip_bomb_on_either_wire_is_an_error(tmp_path, fake_provider, model, status):
    fake_provider.script(GzipBomb(status))
    result = ask(tmp_path, fake_provider, model)
    assert one_line(result)
    assert saved_reply(tmp_path)["stop_reason"] == "error"
