"""Bodies that cannot fill the memory (issue 37): a stream line without end,
endless or slow error bodies, a gzip bomb; the real ``tangents -p`` against
the fake provider, ending with one line on stderr, the reply saved and the
database sound."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest
from fake_provider import EndlessError, EndlessLine, GzipBomb

from tests.integration.limits_run import (
    BOUND,
    CLAUDE,
    FULL,
    GPT,
    LM_STUDIO,
    OLLAMA,
    ask,
    one_line,
    saved_reply,
    text_of,
)


@pytest.mark.parametrize("model", [GPT, CLAUDE])
def test_a_line_without_end_is_refused_at_the_line_limit(tmp_path, fake_provider, model) -> None:
    fake_provider.script(EndlessLine(after_chunks=6))
    result = ask(tmp_path, fake_provider, model)
    assert "16 MB" in one_line(result)
    assert fake_provider.endless_bytes < 16 * 1024 * 1024 + BOUND
    reply = saved_reply(tmp_path)
    assert reply["stop_reason"] == "error"
    assert FULL.startswith(text_of(reply))


@pytest.mark.parametrize("model", [GPT, CLAUDE])
def test_an_endless_error_body_is_read_only_in_part(tmp_path, fake_provider, model) -> None:
    fake_provider.script(EndlessError(400))
    result = ask(tmp_path, fake_provider, model, "--max-time", "30")
    assert "HTTP 400" in one_line(result)
    assert fake_provider.endless_bytes < BOUND
    assert saved_reply(tmp_path)["stop_reason"] == "error"


@pytest.mark.parametrize("model", [GPT, CLAUDE])
def test_an_error_body_at_a_byte_a_while_is_ended_by_the_first_token_limit(
    tmp_path, fake_provider, model
) -> None:
    fake_provider.script(EndlessError(400, byte_interval=0.2))
    result = ask(tmp_path, fake_provider, model, first_token_timeout=1.5)
    assert "first_token_timeout" in one_line(result)
    assert saved_reply(tmp_path)["stop_reason"] == "error"


def test_a_gzip_bomb_error_body_is_bounded_after_decompression(tmp_path, fake_provider) -> None:
    """A gigabyte once decompressed: the program stays far below it."""
    fake_provider.script(GzipBomb(400))
    peak = tmp_path / "peak-kib"
    wrapper = (sys.executable, "-m", "tests.integration.peak_rss", str(peak))
    result = ask(tmp_path, fake_provider, CLAUDE, wrapper=wrapper)
    assert "HTTP 400" in one_line(result)
    assert saved_reply(tmp_path)["stop_reason"] == "error"
    peak_kib = int(peak.read_text())
    assert peak_kib < 600 * 1024


PEAK_BOUND_KIB = 600 * 1024
"""Far below what the payloads below hold once read (gigabytes), above what
the program holds to import litellm and refuse them."""


def peak_of(tmp_path) -> tuple[tuple[str, ...], Callable[[], int]]:
    """A wrapper that measures the program's peak resident size, and its reader (KiB)."""
    peak = tmp_path / "peak-kib"
    wrapper = (sys.executable, "-m", "tests.integration.peak_rss", str(peak))
    return wrapper, lambda: int(peak.read_text())


def test_a_line_without_end_through_litellm_is_refused_in_bounded_memory(
    tmp_path, fake_provider
) -> None:
    """Through the openai SDK's event decoder, which has no line limit of its own."""
    fake_provider.script(EndlessLine(after_chunks=6))
    wrapper, peak_kib = peak_of(tmp_path)
    result = ask(tmp_path, fake_provider, LM_STUDIO, wrapper=wrapper)
    assert "16 MB" in one_line(result)
    reply = saved_reply(tmp_path)
    assert reply["stop_reason"] == "error"
    assert FULL.startswith(text_of(reply))
    assert peak_kib() < PEAK_BOUND_KIB


@pytest.mark.parametrize(
    ("model", "status", "said"),
    [(LM_STUDIO, 400, "HTTP 400"), (OLLAMA, 400, "HTTP 400"), (OLLAMA, 200, "16 MB")],
    ids=["openai-sdk-error", "own-handler-error", "own-handler-reply"],
)
def test_a_gzip_bomb_through_litellm_is_bounded_after_decompression(
    tmp_path, fake_provider, model, status, said
) -> None:
    """A gigabyte of spaces once decompressed, as an error body or as a reply."""
    fake_provider.script(GzipBomb(status))
    wrapper, peak_kib = peak_of(tmp_path)
    result = ask(tmp_path, fake_provider, model, wrapper=wrapper)
    assert said in one_line(result)
    assert saved_reply(tmp_path)["stop_reason"] == "error"
    assert peak_kib() < PEAK_BOUND_KIB
