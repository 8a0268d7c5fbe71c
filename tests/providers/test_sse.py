"""The server-sent events reader against the anthropic SDK's own decoder, on
real httpx responses: the same events from any bytes cut at any points, and
the same errors from an ``error`` event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from itertools import pairwise

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.providers import sdk, sse
from core.providers.anthropic_provider import _events as anthropic_events
from core.providers.base import ProviderError
from core.providers.errors import to_provider_error


def response(body: bytes, cuts: Sequence[int] = ()) -> httpx.Response:
    """A streamed response whose body arrives in pieces cut at ``cuts``."""
    edges = [0, *sorted(cuts), len(body)]

    async def pieces() -> AsyncIterator[bytes]:
        for start, end in pairwise(edges):
            yield body[start:end]

    return httpx.Response(200, content=pieces())


async def ours(body: bytes, cuts: Sequence[int]) -> list[tuple[str, str]]:
    return [event async for event in sse.events(response(body, cuts))]


async def the_sdks(body: bytes, cuts: Sequence[int]) -> list[tuple[str, str]]:
    decoder = sdk.anthropic()._streaming.SSEDecoder()
    return [
        (event.event or "", event.data)
        async for event in decoder.aiter_bytes(response(body, cuts).aiter_bytes())
    ]


def acted_on(events: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """What a reader acts on: events with a name or some data (the SDK's decoder
    also yields events of an ``id:`` or ``retry:`` alone, which it then skips)."""
    return [(name, data) for name, data in events if name or data]


VALUE = st.text(st.sampled_from('ab :{}"é✓\u2028\u0085\x0b\x1c'), max_size=8)
LINE = st.one_of(
    st.builds(lambda v: f"event:{v}", VALUE),
    st.builds(lambda v: f"event: {v}", VALUE),
    st.builds(lambda v: f"data:{v}", VALUE),
    st.builds(lambda v: f"data: {v}", VALUE),
    st.just("data"),
    st.builds(lambda v: f": {v}", VALUE),
    st.builds(lambda v: f"id: {v}", VALUE),
    st.just("retry: 10"),
    st.builds(lambda v: f"other: {v}", VALUE),
)
ENDING = st.sampled_from(["\n", "\r\n", "\r"])


def ended(parts: st.SearchStrategy[str], most: int) -> st.SearchStrategy[str]:
    """Up to ``most`` of ``parts``, each with a line end of its own."""
    return st.lists(st.tuples(parts, ENDING), max_size=most).map(
        lambda pairs: "".join(part + end for part, end in pairs)
    )


EVENT = ended(LINE, 4)  # its lines
STREAM = ended(EVENT, 5)  # its events, each ended by a blank line


@given(
    stream=STREAM,
    tail=st.sampled_from(["", "data: cut", "event: x\n"]),
    cut_at=st.lists(st.floats(0, 1), max_size=6),
)
def test_the_same_events_as_the_sdks_decoder(stream, tail, cut_at):
    body = (stream + tail).encode()
    cuts = [int(f * len(body)) for f in cut_at]
    got = asyncio.run(ours(body, cuts))
    assert acted_on(got) == acted_on(asyncio.run(the_sdks(body, cuts)))


async def test_a_line_separator_inside_the_json_does_not_end_the_line():
    """JSON may carry U+2028 and U+0085 unescaped; httpx's ``aiter_lines`` would split there."""
    data = json.dumps({"text": "a\u2028b\u0085c"}, ensure_ascii=False)
    body = f"event: content_block_delta\ndata: {data}\n\n".encode()
    assert await ours(body, [5, len(body) - 1]) == [("content_block_delta", data)]


async def test_an_event_cut_off_before_its_blank_line_is_none():
    assert await ours(b"data: 1\n\ndata: 2\n", []) == [("", "1")]


ERROR_EVENTS = [
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
    {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
    {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}},
    {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}},
]


@pytest.mark.parametrize(
    "data",
    [json.dumps(e) for e in ERROR_EVENTS] + ["the upstream connection broke", ""],
    ids=lambda d: d[:40] or "empty",
)
async def test_an_error_event_is_the_error_the_sdk_raises(data):
    """Both read the same body, one event in then an ``error`` event: the same
    ProviderError (kind, detail, status) comes of what each raises."""
    anthropic = sdk.anthropic()
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}
    body = (
        f"event: message_start\ndata: {json.dumps(start)}\n\n"
        f"event: error\ndata: {data}\n\n".encode()
    )
    read: list[object] = []
    with pytest.raises(anthropic.APIStatusError) as by_sdk:
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test-0000000000")
        stream = anthropic.AsyncStream(
            cast_to=anthropic.types.RawMessageStreamEvent,
            response=_sdk_response(body),
            client=client,
        )
        async for event in stream:
            read.append(event.type)
    with pytest.raises(anthropic.APIStatusError) as by_us:
        async for event in anthropic_events(anthropic, _sdk_response(body)):
            read.append(event["type"])
    assert read == ["message_start", "message_start"]
    theirs, mine = to_provider_error(by_sdk.value), to_provider_error(by_us.value)
    assert (mine.kind, mine.detail, mine.status) == (theirs.kind, theirs.detail, theirs.status)
    assert type(by_us.value) is type(by_sdk.value)
    assert (str(by_us.value), by_us.value.body) == (str(by_sdk.value), by_sdk.value.body)


def _sdk_response(body: bytes) -> object:
    """A response of the SDK's own httpx (httpx2), as the provider is given one."""
    import httpx2  # the SDK's dependency, imported with it

    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    return httpx2.Response(200, content=body, request=request)


async def test_a_line_ended_by_a_lone_cr_at_a_cut_ends_there():
    assert await ours(b"data: 1\r\rdata: 2\n\n", [8]) == [("", "1"), ("", "2")]


async def test_a_line_over_the_limit_is_refused(monkeypatch):
    monkeypatch.setattr(sse, "MAX_LINE", 100)
    with pytest.raises(ProviderError, match="longer than 16 MB"):
        await ours(b"data: " + b"x" * 200, [50, 120])
    with pytest.raises(ProviderError, match="longer than 16 MB"):  # one event's data lines
        await ours(b"data: 1234567890\n" * 20 + b"\n", [])
    assert await ours(b"data: " + b"x" * 90 + b"\n\n", [30]) == [("", "x" * 90)]


@given(stream=STREAM, piece=st.integers(1, 7))
def test_a_big_chunk_split_a_piece_at_a_time_reads_the_same(stream, piece):
    """A gzip can expand to one huge chunk, split into lines a piece at a time
    (so a flood of empty lines is never one big list): the same events."""
    body = stream.encode()
    whole = asyncio.run(ours(body, []))
    sse.PIECE, default = piece, sse.PIECE
    try:
        assert asyncio.run(ours(body, [])) == whole
    finally:
        sse.PIECE = default
