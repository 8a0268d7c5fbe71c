"""One HTTP stack (issue #31): every OpenAI-compatible endpoint, a plain-http
local server included, goes through httpx, which follows redirects and
proxies and reports a connection closed unanswered once."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from core.providers import http_clients
from core.providers.base import ChatRequest, ErrorEvent, TextDelta
from core.providers.openai_provider import OpenAIProvider
from core.sessions.messages import user_text

Answer = Callable[[int, bytes], bytes | None]
"""The bytes a raw server writes for a request (head and body), given the
number of the connection it came on; None closes that connection unanswered."""


@pytest.fixture
def no_proxy_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


@asynccontextmanager
async def raw_server(answer: Answer) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A server on 127.0.0.1 that reads requests and writes what ``answer``
    says; its base URL and every request, as ``b"<connection number> <request>"``."""
    seen: list[bytes] = []
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        number, connections = connections, connections + 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: *(\d+)", head)
            request = head + await reader.readexactly(int(length[1]) if length else 0)
            seen.append(b"%d %s" % (number, request))
            reply = answer(number, request)
            if reply is not None:
                writer.write(reply)
                await writer.drain()
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", seen


def ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (
        len(body),
        body,
    )


def chat_request(base_url: str) -> ChatRequest:
    return ChatRequest(
        model="openai/gpt-4o", messages=(user_text("hi"),), api_base=base_url + "/v1", timeout=5
    )


async def reply_events(request: ChatRequest) -> list:
    events = [event async for event in OpenAIProvider().stream(request)]
    await http_clients.aclose()
    return events


def text_of(events: list) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


async def test_a_plain_http_server_is_asked_with_httpx(fake_provider, no_proxy_set) -> None:
    events = await reply_events(chat_request(fake_provider.base_url))
    assert text_of(events) == "echo: hi"
    assert fake_provider.last_request.headers["user-agent"].startswith("python-httpx")


async def test_a_connection_closed_unanswered_is_one_error_and_one_request(no_proxy_set) -> None:
    async with raw_server(lambda connection, request: None) as (url, seen):
        events = await asyncio.wait_for(reply_events(chat_request(url)), 30)
    assert any(isinstance(event, ErrorEvent) for event in events)
    assert len(seen) == 1


async def test_a_redirected_stream_is_followed(fake_provider, no_proxy_set) -> None:
    location = f"{fake_provider.base_url}/v1/chat/completions".encode()

    def answer(connection: int, request: bytes) -> bytes:
        return b"HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % (
            location
        )

    async with raw_server(answer) as (url, seen):
        events = await reply_events(chat_request(url))
    assert text_of(events) == "echo: hi"
    assert len(seen) == 1 and len(fake_provider.requests) == 1


async def test_a_proxy_set_for_http_is_where_the_request_goes(no_proxy_set, monkeypatch) -> None:
    stream = b'data: {"choices": [{"index": 0, "delta": {"content": "via proxy"}}]}\n\n'
    stream += b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    stream += b"data: [DONE]\n\n"
    async with raw_server(lambda connection, request: ok(stream)) as (proxy, seen):
        monkeypatch.setenv("http_proxy", proxy)
        events = await reply_events(chat_request("http://model-server.invalid:8080"))
    assert text_of(events) == "via proxy"
    assert seen[0].startswith(
        b"0 POST http://model-server.invalid:8080/v1/chat/completions HTTP/1.1\r\n"
    )


async def test_no_proxy_sends_a_local_server_straight(no_proxy_set, monkeypatch, fake_provider):
    """NO_PROXY names the local server: the request skips the proxy (plain_http
    fell back to httpx here; httpx reads it itself)."""
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    events = await reply_events(chat_request(fake_provider.base_url))
    assert text_of(events) == "echo: hi"
