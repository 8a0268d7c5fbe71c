"""Every fault, through both real clients: the right kind, a short clean detail,
and never the API key."""

from __future__ import annotations

import logging
import socket
from email.utils import formatdate

import pytest
from fake_provider import Drop, Fail, Reply, Stall, StreamError

from core.chat.target import target_for
from core.providers.base import ErrorEvent, ProviderError
from core.providers.errors import (
    DETAIL_LIMIT,
    parse_retry_after,
    sanitize_detail,
    to_provider_error,
)
from core.settings import Settings

LONG = Reply(text="a reply long enough to be cut in the middle of its stream", chunk_size=4)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def error_of(result) -> ProviderError:
    (event,) = result.of(ErrorEvent)
    return event.error


@pytest.mark.parametrize(
    "fault, kind, status",
    [
        (Fail(401), "auth", 401),
        (Fail(403), "auth", 403),
        (Fail(429, retry_after=2), "rate_limit", 429),
        (Fail(500), "server", 500),
        (Fail(503), "server", 503),
        (Fail(529), "overloaded", 529),
        (
            Fail(400, message="prompt is too long: 210000 tokens > 200000 maximum"),
            "context_overflow",
            400,
        ),
        (
            Fail(400, message="This model's maximum context length is 128000 tokens."),
            "context_overflow",
            400,
        ),
        (Fail(400, message="messages: field required"), "bad_request", 400),
        (Fail(404, message="model not found"), "bad_request", 404),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
async def test_http_failures_map_to_kinds(wire, fault, kind, status):
    wire.server.script(fault)
    result = await wire.run()
    error = error_of(result)
    assert (error.kind, error.status) == (kind, status)
    assert result.message.stop_reason == "error"
    assert result.message.content == ()
    assert result.message.error == str(error)


async def test_rate_limit_carries_retry_after_seconds(wire):
    wire.server.script(Fail(429, retry_after=7))
    error = error_of(await wire.run())
    assert error.retry_after == 7.0
    assert "retry after 7 s" in str(error)


async def test_rate_limit_carries_retry_after_http_date(wire):
    wire.server.script(Fail(429, retry_after=formatdate(usegmt=True)))
    error = error_of(await wire.run())
    assert error.retry_after is not None and 0 <= error.retry_after <= 1


async def test_overloaded_body_in_a_500_is_overloaded(wire):
    """litellm reports Anthropic's 529 as a 500; the body still says overloaded."""
    wire.server.script(
        Fail(
            500,
            body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
    )
    assert error_of(await wire.run()).kind == "overloaded"


async def test_overloaded_message_in_a_500_is_overloaded_on_openai_wires(openai_wire):
    openai_wire.server.script(Fail(500, message="Overloaded"))
    assert error_of(await openai_wire.run()).kind == "overloaded"


async def test_connection_refused(wire):
    result = await wire.run(wire.request(api_base=f"http://127.0.0.1:{closed_port()}"))
    assert error_of(result).kind == "connection"
    assert error_of(result).retryable


async def test_stall_before_reply_times_out(wire):
    wire.server.script(Stall(3))
    error = error_of(await wire.run(wire.request(timeout=0.3)))
    assert error.kind == "timeout"
    assert error.status is None


async def test_stall_mid_stream_times_out_keeping_text(wire):
    # The limit is between two reads: long enough for the chunks before the stall
    # to come one after another on a loaded machine, far shorter than the stall.
    wire.server.script(Stall(15, after_chunks=6, reply=LONG))
    result = await wire.run(wire.request(timeout=1.5))
    assert error_of(result).kind == "timeout"
    assert result.message.stop_reason == "error"
    assert result.message.text and LONG.text.startswith(result.message.text)


async def test_error_event_mid_stream_keeps_text(wire):
    wire.server.script(StreamError(after_chunks=6, reply=LONG))
    result = await wire.run()
    assert error_of(result).kind == "overloaded"
    assert result.message.stop_reason == "error"
    assert result.message.meta == {"error_kind": "overloaded"}
    assert LONG.text.startswith(result.message.text)


async def test_connection_dropped_before_any_content_is_a_retryable_error(wire):
    wire.server.script(Drop(after_chunks=0))
    error = error_of(await wire.run())
    assert error.kind == "connection"
    assert error.retryable


async def test_detail_is_one_short_clean_line(wire):
    wire.server.script(
        Fail(500, body="line one\nline two \x1b[31mred\x1b[0m \x1b]0;title\x07" + "x" * 5000)
    )
    error = error_of(await wire.run())
    assert error.kind == "server"
    assert len(error.detail) <= DETAIL_LIMIT
    assert "\n" not in error.detail and "\x1b" not in error.detail and "\x07" not in error.detail


# --- the key never leaks -----------------------------------------------------

CANARIES = [
    "sk-ant-CANARY-4f1c2e9a7b3d5f60a1b2",
    "sk-CANARY9b8c7d6e5f4a3b2c1d0e9f8",
    "plain_canary_7f3a9c1e5b2d",  # matches no key pattern: only the request's key removes it
]


def faults(key: str) -> list[object]:
    echo = f"bad key {key} (Bearer {key})"
    return [
        Fail(401),
        Fail(429, retry_after=2, message=echo),
        Fail(500, message=echo),
        Fail(529, message=echo),
        Fail(400, body=echo),
        Drop(after_chunks=6, reply=LONG),
        Drop(after_chunks=0),
        StreamError(after_chunks=6, message=echo, reply=LONG),
        Stall(3),
    ]


@pytest.mark.parametrize("key", CANARIES)
async def test_canary_key_never_appears(wire, key, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    for fault in [*faults(key), "refused"]:
        if fault == "refused":
            request = wire.request(
                api_key=key, api_base=f"http://127.0.0.1:{closed_port()}", timeout=0.3
            )
        else:
            wire.server.script(fault)
            request = wire.request(api_key=key, timeout=0.3)
        result = await wire.run(request)
        for event in result.of(ErrorEvent):
            seen += [
                str(event.error),
                repr(event.error),
                event.error.detail,
                *map(str, event.error.args),
            ]
        seen += [str(result.message.error), str(result.message.to_dict())]
    assert len(wire.server.requests) == len(faults(key))
    assert any("HTTP 401" in s for s in seen)
    leaked = [s for s in seen if key in s]
    assert leaked == []
    assert key not in caplog.text
    assert all(key not in r.getMessage() for r in caplog.records)
    captured = capsys.readouterr()
    assert key not in captured.out + captured.err


# --- unit: parsing and sanitizing --------------------------------------------


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert (
        parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412480 - 10)
        == 10.0
    )
    assert (
        parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412480 + 10)
        == 0.0
    )
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None


def test_sanitize_detail_redacts_the_given_key_and_env_keys(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok_live_abcdefgh")
    text = sanitize_detail("key=mykey-123456789 token=tok_live_abcdefgh", api_key="mykey-123456789")
    assert "mykey-123456789" not in text and "tok_live_abcdefgh" not in text
    assert text.count("[redacted]") == 2


def test_plain_exceptions_map_to_kinds():
    assert to_provider_error(ConnectionRefusedError("refused")).kind == "connection"
    assert to_provider_error(TimeoutError()).kind == "timeout"
    assert to_provider_error(ValueError("bad json")).kind == "bad_response"
    same = ProviderError("auth", "x")
    assert to_provider_error(same) is same


async def test_key_from_the_environment_is_redacted_too(anthropic_wire, monkeypatch):
    key = "env_canary_secret_9d8c7b6a"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    anthropic_wire.server.script(Fail(401))
    target = target_for(anthropic_wire.model, Settings())
    error = error_of(await anthropic_wire.run(anthropic_wire.request(api_key=target.api_key)))
    assert error.kind == "auth"
    assert key not in str(error)
    assert key in anthropic_wire.server.last_request.headers.get("authorization", "") + str(
        anthropic_wire.server.last_request.headers.get("x-api-key", "")
    )
