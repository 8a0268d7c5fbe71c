"""The plain-http client (:mod:`core.providers.plain_http`): what a request to
a local server is sent with in place of httpx, and where httpx takes over."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from core.messages import user_text
from core.providers import http_clients, plain_http
from core.providers.base import ChatRequest, TextDelta
from core.providers.openai_provider import OpenAIProvider

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
    """A server on 127.0.0.1 that reads requests (heads with a Content-Length
    body) and writes what ``answer`` says (closing the connection after an
    answer that says ``Connection: close``); its base URL and every request,
    as ``b"<connection number> <request>"``."""
    seen: list[bytes] = []
    connections = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        number, connections = connections, connections + 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?i)content-length: *(\d+)", head)
                request = head + await reader.readexactly(int(length[1]) if length else 0)
                seen.append(b"%d %s" % (number, request))
                reply = answer(number, request)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                if b"\r\nConnection: close\r\n" in reply.split(b"\r\n\r\n", 1)[0] + b"\r\n":
                    break
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", seen


def ok(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


@pytest.mark.parametrize(
    ("url", "env", "served"),
    [
        ("http://127.0.0.1:8080/v1", {}, True),
        ("http://localhost/v1", {}, True),
        ("https://api.openai.com/v1", {}, False),
        ("http://user:secret@127.0.0.1:8080/v1", {}, False),
        ("http://127.0.0.1:8080/v1", {"http_proxy": "http://proxy:3128"}, False),
        ("http://127.0.0.1:8080/v1", {"ALL_PROXY": "http://proxy:3128"}, False),
        ("http://127.0.0.1:8080/v1", {"HTTPS_PROXY": "http://proxy:3128"}, True),
    ],
)
def test_what_goes_over_plain_http(url, env, served, no_proxy_set, monkeypatch):
    """Plain http with nothing httpx would add: no TLS, no credentials in the
    URL, no proxy that httpx would send it through."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert plain_http.serves(url) is served


def test_a_client_that_ignores_proxies_is_served_despite_one(no_proxy_set, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://proxy:3128")
    assert plain_http.serves("http://127.0.0.1:8080/v1", proxies=False)


async def test_a_kept_connection_the_server_dropped_is_replaced_once():
    """The first answer leaves its connection open; the server then drops it
    without answering the second request, as a server whose keep-alive ran out
    does: the request goes again on a new connection."""

    def answer(connection: int, request: bytes) -> bytes | None:
        if connection == 0:
            return ok(b"one") if request.startswith(b"GET /one") else None
        return (
            b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ntwo"  # the body ends with the connection
        )

    async with raw_server(answer) as (url, seen):
        client = plain_http.Client()
        first = await client.request("GET", url + "/one", timeout=5)
        second = await client.request("POST", url + "/two", json={"n": 2}, timeout=5)
        await client.aclose()
    assert (first.status_code, first.content, second.content) == (200, b"one", b"two")
    assert [line.split(b"\r\n", 1)[0] for line in seen] == [
        b"0 GET /one HTTP/1.1",
        b"0 POST /two HTTP/1.1",
        b"1 POST /two HTTP/1.1",
    ]
    assert seen[-1].endswith(b'\r\n\r\n{"n":2}')


async def test_a_new_connection_closed_unanswered_is_an_error_and_the_request_is_not_sent_twice():
    async with raw_server(lambda connection, request: None) as (url, seen):
        client = plain_http.Client()
        with pytest.raises(plain_http.RemoteProtocolError):
            request = client.request("POST", url + "/v1/chat/completions", json={}, timeout=5)
            await asyncio.wait_for(request, 5)
        await client.aclose()
    assert len(seen) == 1


async def test_a_path_is_sent_percent_encoded_and_a_header_that_cannot_be_sent_is_refused():
    async with raw_server(lambda connection, request: ok(b"{}")) as (url, seen):
        client = plain_http.Client()
        response = await client.request("GET", url + "/api/v0/models/my model?q=a b", timeout=5)
        with pytest.raises(ValueError, match="cannot send"):
            async with client.stream("GET", url, headers={"Authorization": "a\r\nX: y"}, timeout=5):
                pass
        await client.aclose()
    assert response.json() == {}
    assert seen == [seen[0]] and seen[0].startswith(b"0 GET /api/v0/models/my%20model?q=a%20b HTTP")


async def test_the_timeout_bounds_each_read():
    async with raw_server(lambda connection, request: b"HTTP/1.1 200 OK\r\n") as (url, _):
        client = plain_http.Client()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.request("GET", url, timeout=0.1), 5)
        await client.aclose()


def chat_request(base_url: str) -> ChatRequest:
    return ChatRequest(
        model="openai/gpt-4o", messages=(user_text("hi"),), api_base=base_url + "/v1", timeout=5
    )


async def reply_text(request: ChatRequest) -> str:
    events = [event async for event in OpenAIProvider().stream(request)]
    await http_clients.aclose()
    return "".join(event.text for event in events if isinstance(event, TextDelta))


async def test_a_redirected_stream_is_sent_again_by_httpx_which_follows_it(
    fake_provider, no_proxy_set
):
    location = f"{fake_provider.base_url}/v1/chat/completions".encode()

    def answer(connection: int, request: bytes) -> bytes:
        return b"HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % (
            location
        )

    async with raw_server(answer) as (url, seen):
        text = await reply_text(chat_request(url))
    assert text == "echo: hi"
    assert b"user-agent: tangents" in seen[0].lower()
    assert fake_provider.last_request.headers["user-agent"].startswith("python-httpx")


async def test_a_proxy_set_for_http_is_where_a_plain_http_request_goes(no_proxy_set, monkeypatch):
    """httpx sends it, in the absolute form a proxy reads."""
    stream = b'data: {"choices": [{"index": 0, "delta": {"content": "via proxy"}}]}\n\n'
    stream += b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    stream += b"data: [DONE]\n\n"
    async with raw_server(lambda connection, request: ok(stream)) as (proxy, seen):
        monkeypatch.setenv("http_proxy", proxy)
        text = await reply_text(chat_request("http://model-server.invalid:8080"))
    assert text == "via proxy"
    assert seen[0].startswith(
        b"0 POST http://model-server.invalid:8080/v1/chat/completions HTTP/1.1\r\n"
    )
