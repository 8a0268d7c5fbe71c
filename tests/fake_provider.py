"""A fake LLM provider over real HTTP on 127.0.0.1, for tests.

It speaks these wire formats, chosen by path:

* OpenAI chat completions, ``POST /v1/chat/completions`` (and ``/chat/completions``):
  SSE ``data:`` chunks ending in ``[DONE]``, ``reasoning_content`` deltas,
  ``tool_calls`` deltas with the arguments in pieces, a final usage chunk when
  ``stream_options.include_usage`` is set; or one JSON body when not streaming.
* Anthropic messages, ``POST /v1/messages``: SSE events ``message_start``,
  ``content_block_start/delta/stop`` (``text_delta``, ``thinking_delta``,
  ``signature_delta``, ``input_json_delta``, ``redacted_thinking`` blocks),
  ``message_delta``, ``message_stop`` and ``ping``; or one JSON body.
* For litellm's own HTTP routes, text replies only: Gemini,
  ``POST /models/NAME:streamGenerateContent`` (SSE), and Ollama,
  ``POST /api/chat`` and ``/api/generate`` (JSON lines).

Every request is recorded (:attr:`FakeProvider.requests`). Responses come from a
queue filled with :meth:`FakeProvider.script`; when it is empty the server
echoes ``"echo: <last user text>"``.

In tests use the ``fake_provider`` fixture (tests/conftest.py). As a process::

    python tests/fake_provider.py --port-file PATH [--script JSONFILE] [--chunk-delay S]
        [--local vllm|llama.cpp|llama-cpp-python|ollama|lm-studio --window TOKENS]

writes its port to PATH and serves until killed. The script file is a JSON list
of items such as ``{"type": "reply", "text": "hi"}``, ``{"type": "fail",
"status": 429, "retry_after": 2}``, ``{"type": "stall", "seconds": 5}``,
``{"type": "drop", "after_chunks": 3}`` (``"clean": true`` ends the body instead
of cutting the connection), ``{"type": "malformed_tool_json"}`` or
``{"type": "stream_error", "after_chunks": 3}`` or ``{"type": "raw_stream",
"body": "data: ...\\n\\n"}`` (sent as it is); hostile ones: ``{"type":
"trickle", "interval": 2}`` (one byte at a time), ``{"type": "endless_line"}``,
``{"type": "endless_error"}`` (``"byte_interval": 5``: one byte every 5 s),
``{"type": "gzip_bomb"}`` (and :attr:`FakeProvider.endless_info` for window
questions); a stall with many seconds and ``after_chunks`` is a connection
kept open without an end; the fields are those of the
dataclasses below, a nested ``"reply"`` is a reply object. An item with
``"for_model": "NAME"`` answers only requests for that model
(:meth:`FakeProvider.script_for`). A running server also accepts
more items at ``POST /_fake/script`` and lists what it received at
``GET /_fake/requests``.

With ``local=LocalServer(kind, window)`` (``--local KIND --window N``) it also
imitates a local server with a small window: it reports the window where that
server does and refuses longer prompts in its words (tests/fake_local_server.py).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Union

from aiohttp import web

try:
    from fake_local_server import KINDS, LocalServer
except ImportError:  # imported as tests.fake_provider
    from tests.fake_local_server import KINDS, LocalServer

if __name__ != "__main__":
    # One module whichever way a test imports it (``fake_provider`` via the path
    # tests/conftest.py adds, or ``tests.fake_provider``), so the server's
    # isinstance checks on script items hold.
    sys.modules.setdefault("fake_provider", sys.modules[__name__])
    sys.modules.setdefault("tests.fake_provider", sys.modules[__name__])

# --- script items ------------------------------------------------------------


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    """A dict is sent as JSON; a string is sent exactly as given (may be malformed)."""
    id: str | None = None

    @property
    def raw(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    text: str = ""
    thinking: str = ""
    signature: str | None = None
    redacted_thinking: str | None = None
    """Opaque data of a redacted thinking block (Anthropic only)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, int] | None = None
    """Keys: input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens."""
    stop_reason: str | None = None
    """Anthropic-style (end_turn, max_tokens, tool_use, refusal); derived when None."""
    chunk_size: int = 4
    """Characters of text, thinking or tool arguments per delta."""
    delay: float | None = None
    """Seconds between stream chunks; None uses the server's default."""


@dataclass
class Fail:
    status: int
    retry_after: float | str | None = None
    """Sent as the ``retry-after`` header: seconds or an HTTP date."""
    message: str | None = None
    """The error message inside a realistic body for the wire format. By
    default a stock message; a 401 echoes the key it received, as some APIs do."""
    body: dict[str, Any] | str | None = None
    """Replaces the whole body (a string is sent as plain text)."""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stall:
    """Wait ``seconds``: before the response starts (``after_chunks`` None) or
    after that many stream chunks; then carry on with ``reply``."""

    seconds: float
    after_chunks: int | None = None
    reply: Reply | None = None


@dataclass
class Drop:
    """Cut the connection after ``after_chunks`` stream chunks (0: before any byte).

    With ``clean`` the body is ended properly instead, so the stream simply stops
    without a finish reason, as when a proxy gives up on a long reply."""

    after_chunks: int = 2
    clean: bool = False
    reply: Reply | None = None


@dataclass
class StreamError:
    """Send an error event in the stream after ``after_chunks`` chunks."""

    after_chunks: int = 2
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    reply: Reply | None = None


@dataclass
class MalformedToolJson:
    """A tool call whose streamed arguments are not valid JSON."""

    name: str = "read_file"
    raw_arguments: str = '{"path": "notes.txt", "lines": [1, 2'
    text: str = "Let me look."

    def reply(self) -> Reply:
        return Reply(text=self.text, tool_calls=[ToolCall(self.name, self.raw_arguments)])


@dataclass
class RawStream:
    """A stream body sent exactly as given (server-sent events written by the
    test), for values no well-behaved server sends: wrong JSON types, lone
    surrogates, huge numbers, deep nesting."""

    body: str


@dataclass
class Trickle:
    """Send the reply's stream one byte every ``interval`` seconds (slowloris)."""

    interval: float
    reply: Reply | None = None


@dataclass
class EndlessLine:
    """After ``after_chunks`` chunks, a ``data:`` line that never ends, sent as
    fast as the client reads it; with ``short_lines``, an event that never
    ends instead: short ``data:`` lines and never the blank line after them."""

    after_chunks: int = 2
    reply: Reply | None = None
    short_lines: bool = False


@dataclass
class EndlessError:
    """An error ``status`` whose body never ends: 64 KiB at a time as fast as
    the client reads it, or ``byte_interval`` > 0: one byte every that many seconds."""

    status: int = 500
    byte_interval: float = 0.0


@dataclass
class GzipBomb:
    """An error ``status`` whose gzip body (about a MB on the wire) expands to
    :data:`BOMB_SIZE` bytes."""

    status: int = 500


ScriptItem = Union[
    Reply,
    Fail,
    Stall,
    Drop,
    StreamError,
    MalformedToolJson,
    RawStream,
    Trickle,
    EndlessLine,
    EndlessError,
    GzipBomb,
]

_ITEM_TYPES: dict[str, type] = {
    "reply": Reply,
    "fail": Fail,
    "stall": Stall,
    "drop": Drop,
    "stream_error": StreamError,
    "malformed_tool_json": MalformedToolJson,
    "raw_stream": RawStream,
    "trickle": Trickle,
    "endless_line": EndlessLine,
    "endless_error": EndlessError,
    "gzip_bomb": GzipBomb,
}

BOMB_SIZE = 1 << 30
"""What a :class:`GzipBomb` body expands to: a gigabyte of spaces."""
_BLOCK = b"x" * 65536
_SHORT_LINES = b"x\ndata: " * 8192
_bomb: list[bytes] = []


def gzip_bomb() -> bytes:
    """:data:`BOMB_SIZE` spaces, gzipped: one megabyte compressed and fully
    flushed (which makes every later copy of it the same bytes), repeated."""
    if not _bomb:
        import struct
        import zlib

        block = b" " * (1 << 20)
        packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        first = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
        again = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
        crc = 0
        for _ in range(BOMB_SIZE // len(block)):
            crc = zlib.crc32(block, crc)
        body = first + again * (BOMB_SIZE // len(block) - 1) + packer.flush()
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
        trailer = struct.pack("<II", crc, BOMB_SIZE & 0xFFFFFFFF)
        _bomb.append(header + body + trailer)
    return _bomb[0]


def item_from_json(data: dict[str, Any]) -> ScriptItem:
    """Build a script item from its JSON form (``{"type": "reply", ...}``)."""
    data = dict(data)
    kind = data.pop("type", "reply")
    if kind not in _ITEM_TYPES:
        raise ValueError(f"unknown script item type: {kind!r}")
    if kind == "reply":
        data["tool_calls"] = [ToolCall(**tc) for tc in data.get("tool_calls", [])]
    elif "reply" in data and data["reply"] is not None:
        data["reply"] = item_from_json({"type": "reply", **data["reply"]})
    return _ITEM_TYPES[kind](**data)


def _client_end(request: web.Request) -> str:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    return f"{peer[0]}:{peer[1]}" if peer else ""


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: Any
    """Parsed JSON, or the raw text when it was not JSON."""
    client: str = ""
    """The client's end of the connection (``host:port``): the same for
    requests a client sent on one kept connection."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "client": self.client,
        }


# --- wire formats ------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_MESSAGES = {
    400: "Bad request",
    403: "Permission denied",
    404: "Not found",
    429: "Rate limit exceeded, please slow down",
    500: "Internal server error",
    529: "Overloaded",
}
_OPENAI_FINISH = {
    "end_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _stop_reason(reply: Reply) -> str:
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if reply.tool_calls else "end_turn"


def _usage(reply: Reply, body: Any) -> dict[str, int]:
    """The reply's usage, with deterministic estimates for missing counts."""
    estimated = {
        "input_tokens": max(1, len(json.dumps(body)) // 4),
        "output_tokens": max(1, (len(reply.text) + len(reply.thinking)) // 4),
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }
    estimated.update(reply.usage or {})
    return estimated


def _tool_id(index: int, call: ToolCall, prefix: str) -> str:
    return call.id or f"{prefix}_{index:04d}"


class _Anthropic:
    @staticmethod
    def error_body(status: int, message: str) -> dict[str, Any]:
        kind = _ANTHROPIC_ERROR_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return {"type": "error", "error": {"type": kind, "message": message}}

    @staticmethod
    def stream_error(error_type: str, message: str) -> bytes:
        data = {"type": "error", "error": {"type": error_type, "message": message}}
        return f"event: error\ndata: {json.dumps(data)}\n\n".encode()

    @staticmethod
    def chunks(reply: Reply, body: Any) -> Iterator[bytes]:
        def event(name: str, data: dict[str, Any]) -> bytes:
            return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()

        usage = _usage(reply, body)
        yield event(
            "message_start",
            {
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "fake"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": usage["input_tokens"],
                        "cache_creation_input_tokens": usage["cache_write_tokens"],
                        "cache_read_input_tokens": usage["cache_read_tokens"],
                        "output_tokens": 1,
                    },
                }
            },
        )
        yield event("ping", {})
        for index, (block, deltas) in enumerate(_Anthropic._blocks(reply)):
            yield event("content_block_start", {"index": index, "content_block": block})
            for delta in deltas:
                yield event("content_block_delta", {"index": index, "delta": delta})
            yield event("content_block_stop", {"index": index})
        yield event(
            "message_delta",
            {
                "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        yield event("message_stop", {})

    @staticmethod
    def _blocks(reply: Reply) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
        if reply.redacted_thinking is not None:
            yield {"type": "redacted_thinking", "data": reply.redacted_thinking}, []
        if reply.thinking or reply.signature:
            deltas = [
                {"type": "thinking_delta", "thinking": p}
                for p in _pieces(reply.thinking, reply.chunk_size)
            ]
            if reply.signature:
                deltas.append({"type": "signature_delta", "signature": reply.signature})
            yield {"type": "thinking", "thinking": "", "signature": ""}, deltas
        if reply.text:
            deltas = [
                {"type": "text_delta", "text": p} for p in _pieces(reply.text, reply.chunk_size)
            ]
            yield {"type": "text", "text": ""}, deltas
        for i, call in enumerate(reply.tool_calls):
            block = {
                "type": "tool_use",
                "id": _tool_id(i, call, "toolu"),
                "name": call.name,
                "input": {},
            }
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [
                {"type": "input_json_delta", "partial_json": p}
                for p in _pieces(call.raw, reply.chunk_size)
            ]
            yield block, deltas

    @staticmethod
    def whole(reply: Reply, body: Any) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.redacted_thinking is not None:
            content.append({"type": "redacted_thinking", "data": reply.redacted_thinking})
        if reply.thinking or reply.signature:
            content.append(
                {"type": "thinking", "thinking": reply.thinking, "signature": reply.signature or ""}
            )
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for i, call in enumerate(reply.tool_calls):
            try:
                args = json.loads(call.raw)
            except ValueError:
                args = {}
            content.append(
                {
                    "type": "tool_use",
                    "id": _tool_id(i, call, "toolu"),
                    "name": call.name,
                    "input": args,
                }
            )
        usage = _usage(reply, body)
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": _stop_reason(reply),
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage["input_tokens"],
                "output_tokens": usage["output_tokens"],
                "cache_creation_input_tokens": usage["cache_write_tokens"],
                "cache_read_input_tokens": usage["cache_read_tokens"],
            },
        }

    @staticmethod
    def last_user_text(body: Any) -> str:
        for message in reversed(body.get("messages") or []):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [
                b.get("text", "")
                for b in content or []
                if isinstance(b, dict) and b.get("type") == "text"
            ]
            if texts:
                return texts[-1]
        return ""


class _OpenAI:
    @staticmethod
    def error_body(status: int, message: str) -> dict[str, Any]:
        kind = {401: "invalid_request_error", 429: "rate_limit_exceeded"}.get(
            status, "server_error"
        )
        if 400 <= status < 500 and status not in (401, 429):
            kind = "invalid_request_error"
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}

    @staticmethod
    def stream_error(error_type: str, message: str) -> bytes:
        return f"data: {json.dumps({'error': {'message': message, 'type': error_type, 'code': None}})}\n\n".encode()

    @staticmethod
    def _usage_dict(reply: Reply, body: Any) -> dict[str, Any]:
        u = _usage(reply, body)
        return {
            "prompt_tokens": u["input_tokens"] + u["cache_read_tokens"],
            "completion_tokens": u["output_tokens"],
            "total_tokens": u["input_tokens"] + u["cache_read_tokens"] + u["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": u["cache_read_tokens"]},
            "completion_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]},
        }

    @staticmethod
    def chunks(reply: Reply, body: Any) -> Iterator[bytes]:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        created = int(time.time())

        def chunk(
            delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None
        ) -> bytes:
            data: dict[str, Any] = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.get("model", "fake"),
                "choices": []
                if delta is None
                else [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if include_usage:
                data["usage"] = usage
            return f"data: {json.dumps(data)}\n\n".encode()

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(reply.thinking, reply.chunk_size):
            yield chunk({"reasoning_content": piece})
        for piece in _pieces(reply.text, reply.chunk_size):
            yield chunk({"content": piece})
        for i, call in enumerate(reply.tool_calls):
            head = {"index": i, "id": _tool_id(i, call, "call"), "type": "function"}
            yield chunk(
                {"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}
            )
            for piece in _pieces(call.raw, reply.chunk_size):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        yield chunk({}, _OPENAI_FINISH.get(_stop_reason(reply), "stop"))
        if include_usage:
            yield chunk(None, usage=_OpenAI._usage_dict(reply, body))
        yield b"data: [DONE]\n\n"

    @staticmethod
    def whole(reply: Reply, body: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": _tool_id(i, call, "call"),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": _OPENAI_FINISH.get(_stop_reason(reply), "stop"),
                }
            ],
            "usage": _OpenAI._usage_dict(reply, body),
        }

    @staticmethod
    def last_user_text(body: Any) -> str:
        for message in reversed(body.get("messages") or []):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [
                p.get("text", "")
                for p in content or []
                if isinstance(p, dict) and p.get("type") == "text"
            ]
            if texts:
                return texts[-1]
        return ""


class _Gemini:
    """Google AI Studio's ``:streamGenerateContent?alt=sse`` (litellm's
    ``gemini/...``): one event per piece of text; text replies only."""

    @staticmethod
    def error_body(status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}

    @staticmethod
    def stream_error(error_type: str, message: str) -> bytes:
        return f"data: {json.dumps({'error': {'message': message, 'status': error_type}})}\r\n\r\n".encode()

    @staticmethod
    def _data(reply: Reply, body: Any, text: str, last: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {
            "content": {"role": "model", "parts": [{"text": text}]},
            "index": 0,
        }
        data: dict[str, Any] = {"candidates": [candidate]}
        if last:
            usage = _usage(reply, body)
            candidate["finishReason"] = (
                "MAX_TOKENS" if reply.stop_reason == "max_tokens" else "STOP"
            )
            data["usageMetadata"] = {
                "promptTokenCount": usage["input_tokens"],
                "candidatesTokenCount": usage["output_tokens"],
                "totalTokenCount": usage["input_tokens"] + usage["output_tokens"],
            }
        return data

    @staticmethod
    def chunks(reply: Reply, body: Any) -> Iterator[bytes]:
        pieces = _pieces(reply.text, reply.chunk_size) or [""]
        for i, piece in enumerate(pieces):
            data = _Gemini._data(reply, body, piece, last=i == len(pieces) - 1)
            yield f"data: {json.dumps(data)}\r\n\r\n".encode()

    @staticmethod
    def whole(reply: Reply, body: Any) -> dict[str, Any]:
        return _Gemini._data(reply, body, reply.text, last=True)

    @staticmethod
    def last_user_text(body: Any) -> str:
        for content in reversed(body.get("contents") or []):
            texts = [p.get("text", "") for p in content.get("parts") or [] if isinstance(p, dict)]
            if content.get("role") == "user" and texts:
                return texts[-1]
        return ""


class _Ollama:
    """Ollama's ``/api/chat`` (litellm's ``ollama_chat/...``) and
    ``/api/generate`` (``ollama/...``): JSON lines; text replies only."""

    content_type = "application/x-ndjson"

    def __init__(self, chat: bool) -> None:
        self.chat = chat

    @staticmethod
    def error_body(status: int, message: str) -> dict[str, Any]:
        return {"error": message}

    @staticmethod
    def stream_error(error_type: str, message: str) -> bytes:
        return f"{json.dumps({'error': message})}\n".encode()

    def _line(self, text: str, body: Any, done: dict[str, Any] | None = None) -> bytes:
        data: dict[str, Any] = {
            "model": body.get("model", "fake"),
            "created_at": "2026-01-01T00:00:00Z",
        }
        if self.chat:
            data["message"] = {"role": "assistant", "content": text}
        else:
            data["response"] = text
        data["done"] = done is not None
        data.update(done or {})
        return f"{json.dumps(data)}\n".encode()

    def chunks(self, reply: Reply, body: Any) -> Iterator[bytes]:
        for piece in _pieces(reply.text, reply.chunk_size):
            yield self._line(piece, body)
        usage = _usage(reply, body)
        reason = "length" if reply.stop_reason == "max_tokens" else "stop"
        yield self._line(
            "",
            body,
            {
                "done_reason": reason,
                "prompt_eval_count": usage["input_tokens"],
                "eval_count": usage["output_tokens"],
            },
        )

    def whole(self, reply: Reply, body: Any) -> dict[str, Any]:
        return json.loads(self._line(reply.text, body, {"done_reason": "stop"}))

    def last_user_text(self, body: Any) -> str:
        if not self.chat:
            # litellm sends the chat as one prompt: "### User:\nTEXT\n\n"
            lines = str(body.get("prompt", "")).strip().splitlines()
            return lines[-1] if lines else ""
        return _OpenAI.last_user_text(body)


def _wire(path: str) -> Any:
    """The wire format a request path speaks."""
    if path == "/v1/messages":
        return _Anthropic
    if path.startswith(("/models/", "/v1beta/models/")):
        return _Gemini
    if path in ("/api/chat", "/api/generate"):
        return _Ollama(chat=path == "/api/chat")
    return _OpenAI


# --- the server --------------------------------------------------------------


class FakeProvider:
    """The fake server. ``start()`` runs it on its own thread and event loop, so
    it serves sync and async tests alike and outlives any one test loop."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        chunk_delay: float = 0.0,
        local: LocalServer | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.chunk_delay = chunk_delay
        self.local = local
        """A small-window model served as that local server does (tests/fake_local_server.py)."""
        self.requests: list[RecordedRequest] = []
        self.chunks_sent = 0
        """Stream chunks written to clients so far, every request counted."""
        self.info_requests: list[tuple[str, dict[str, str]]] = []
        """Window and model-list questions (GET /props, /v1/models, ...): path and headers."""
        self._queue: deque[ScriptItem] = deque()
        self._by_model: dict[str, deque[ScriptItem]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._handlers: set[asyncio.Task[Any]] = set()
        self.most_at_once = 0
        """The most requests it was answering at the same time (a single-slot
        local server cuts off or queues all but one)."""

        self.endless_bytes = 0
        """Bytes of endless bodies and lines written so far (a client that stops
        reading stops it: what was written is bounded by its reads and the
        socket buffers)."""
        self.endless_info = False
        """Answer every window question (GET /props, /v1/models, ...) with a
        body that never ends."""

    # scripting and inspection

    def script(self, *items: ScriptItem) -> FakeProvider:
        """Queue responses, served one per request in order."""
        with self._lock:
            self._queue.extend(items)
        return self

    def script_for(self, model: str, *items: ScriptItem) -> FakeProvider:
        """Queue responses for requests naming ``model`` (as it goes on the wire:
        ``gpt-x`` for ``openai/gpt-x``), served before the shared queue: how
        concurrent requests to several models each get their own script."""
        with self._lock:
            self._by_model.setdefault(model, deque()).extend(items)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue) + sum(len(q) for q in self._by_model.values())

    @property
    def answering(self) -> int:
        """Requests it is answering now."""
        return len(self._handlers)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def last_request(self) -> RecordedRequest:
        return self.requests[-1]

    def _next_item(self, model: Any = None) -> ScriptItem | None:
        with self._lock:
            own = self._by_model.get(model) if isinstance(model, str) else None
            if own:
                return own.popleft()
            return self._queue.popleft() if self._queue else None

    # lifecycle

    async def serve(self) -> None:
        """Start listening on the current loop (sets :attr:`port`)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/messages", self._handle)
        app.router.add_post("/v1/chat/completions", self._handle)
        app.router.add_post("/chat/completions", self._handle)
        # behind a gateway path (``/key/XYZ/v1``), as proxies and AI gateways serve it
        app.router.add_post("/{gateway:.+}/chat/completions", self._handle)
        app.router.add_post(
            "/models/{model_and_method}", self._handle
        )  # gemini, its api_base given
        app.router.add_post("/v1beta/models/{model_and_method}", self._handle)
        app.router.add_post("/api/chat", self._handle)
        app.router.add_post("/api/generate", self._handle)
        for path in ("/v1/models", "/models", "/props", "/api/ps", "/api/v0/models/{name}"):
            app.router.add_get(path, self._local_info)
        app.router.add_post("/api/show", self._local_info)
        app.router.add_post("/_fake/script", self._control_script)
        app.router.add_get("/_fake/requests", self._control_requests)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.port = self._runner.addresses[0][1]

    async def shutdown(self) -> None:
        for task in list(self._handlers):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()

    def start(self) -> FakeProvider:
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.serve())
            except BaseException as exc:  # reported to start()
                failure.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self.shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-provider", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # handlers

    async def _control_script(self, request: web.Request) -> web.Response:
        """Items as JSON; one with a ``"for_model"`` field goes to that model's queue."""
        data = await request.json()
        self.script_json(data if isinstance(data, list) else [data])
        return web.json_response({"pending": self.pending})

    def script_json(self, items: list[dict[str, Any]]) -> None:
        for data in items:
            data = dict(data)
            model = data.pop("for_model", None)
            if model is None:
                self.script(item_from_json(data))
            else:
                self.script_for(model, item_from_json(data))

    async def _control_requests(self, request: web.Request) -> web.Response:
        return web.json_response([r.to_dict() for r in self.requests])

    async def _local_info(self, request: web.Request) -> web.StreamResponse:
        self.info_requests.append(
            (request.path, {k.lower(): v for k, v in request.headers.items()})
        )
        if self.endless_info:
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            try:
                await response.prepare(request)
                await response.write(b'{"data": ["')
                while True:
                    await self._sent(response, _BLOCK)
            except ConnectionError:
                return response
        answer = self.local.info(request.path) if self.local is not None else None
        if answer is None:
            return web.json_response({"error": "not found"}, status=404)
        return web.json_response(answer)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        task = asyncio.current_task()
        assert task is not None
        if self.local is not None and self.local.one_at_a_time:
            for running in list(self._handlers):  # cut off, as interrupt_requests does
                self.local.interrupted += 1
                running.cancel()
        self._handlers.add(task)
        self.most_at_once = max(self.most_at_once, len(self._handlers))
        try:
            return await self._respond(request)
        finally:
            self._handlers.discard(task)

    async def _respond(self, request: web.Request) -> web.StreamResponse:
        raw = await request.text()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        self.requests.append(
            RecordedRequest(
                request.method,
                request.path,
                {k.lower(): v for k, v in request.headers.items()},
                body,
                _client_end(request),
            )
        )
        wire = _wire(request.path)
        if not isinstance(body, dict):
            return web.json_response(wire.error_body(400, "body is not a JSON object"), status=400)
        refusal = self.local.refusal(body) if self.local is not None else None
        if refusal == "end":  # llama-cpp-python: the stream starts and just ends
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await response.prepare(request)
            await response.write_eof()
            return response
        if isinstance(refusal, tuple):
            return web.json_response(refusal[1], status=refusal[0])
        if self.local is not None:
            body = self.local.without_usage(body)
        item = self._next_item(body.get("model"))
        if isinstance(item, Fail):
            return self._fail(item, wire, request)
        if isinstance(item, (EndlessError, GzipBomb)):
            return await self._bad_error(item, request)
        if isinstance(item, Stall) and item.after_chunks is None:
            await asyncio.sleep(item.seconds)
        if isinstance(item, RawStream):
            return web.Response(
                body=item.body.encode("utf-8", "surrogatepass"), content_type="text/event-stream"
            )
        reply = self._reply_for(item, wire, body)
        room = self.local.room(body) if self.local is not None else None
        if room is not None and len(reply.text) > room:
            # the window fills while it answers: the server stops it, "length"
            assert self.local is not None
            self.local.cut_replies += 1
            reply = dataclasses.replace(reply, text=reply.text[:room], stop_reason="max_tokens")
        if isinstance(item, Drop) and item.after_chunks == 0:
            self._drop(request)
            return web.Response()
        if not (body.get("stream") or request.path.endswith(":streamGenerateContent")):
            if isinstance(item, Drop):
                self._drop(request)
                return web.Response()
            return web.json_response(wire.whole(reply, body))
        return await self._stream(request, wire, reply, body, item)

    def _reply_for(self, item: ScriptItem | None, wire: Any, body: dict[str, Any]) -> Reply:
        if isinstance(item, Reply):
            return item
        if isinstance(item, MalformedToolJson):
            return item.reply()
        if isinstance(item, (Stall, Drop, StreamError, Trickle, EndlessLine)) and item.reply:
            return item.reply
        text = f"echo: {wire.last_user_text(body)}"
        if self.local is not None:  # a small model: short answers, short summaries
            text = text[: self.local.reply_chars]
        if isinstance(item, (Stall, Drop, StreamError, Trickle, EndlessLine)):
            text += " " + " ".join(f"word{i}" for i in range(40))
        return Reply(text=text)

    def _fail(self, item: Fail, wire: Any, request: web.Request) -> web.Response:
        headers = dict(item.headers)
        if item.retry_after is not None:
            headers["retry-after"] = str(item.retry_after)
        body = item.body
        if body is None:
            message = item.message
            if message is None and item.status == 401:
                key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
                message = f"Incorrect API key provided: {key}"
            if message is None:
                message = _MESSAGES.get(item.status, f"error {item.status}")
            body = wire.error_body(item.status, message)
        if isinstance(body, str):
            return web.Response(status=item.status, text=body, headers=headers)
        return web.json_response(body, status=item.status, headers=headers)

    async def _bad_error(
        self, item: EndlessError | GzipBomb, request: web.Request
    ) -> web.StreamResponse:
        headers = {"Content-Type": "application/json"}
        if isinstance(item, GzipBomb):
            body = gzip_bomb()
            headers.update({"Content-Encoding": "gzip", "Content-Length": str(len(body))})
        response = web.StreamResponse(status=item.status, headers=headers)
        try:
            await response.prepare(request)
            if isinstance(item, GzipBomb):
                await response.write(body)
                await response.write_eof()
                return response
            await response.write(b'{"error": {"message": "')
            while True:
                if item.byte_interval:
                    await asyncio.sleep(item.byte_interval)
                    await self._sent(response, b"x")
                else:
                    await self._sent(response, _BLOCK)
        except ConnectionError:
            pass  # the client stopped reading and went away
        return response

    async def _sent(self, response: web.StreamResponse, data: bytes) -> None:
        """Write ``data`` and count it in :attr:`endless_bytes`."""
        await response.write(data)
        self.endless_bytes += len(data)

    @staticmethod
    def _drop(request: web.Request) -> None:
        if request.transport is not None:
            request.transport.close()

    async def _stream(
        self,
        request: web.Request,
        wire: Any,
        reply: Reply,
        body: dict[str, Any],
        item: ScriptItem | None,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={
                "Content-Type": getattr(wire, "content_type", "text/event-stream"),
                "Cache-Control": "no-cache",
            }
        )
        delay = self.chunk_delay if reply.delay is None else reply.delay
        try:
            await response.prepare(request)
            for count, chunk in enumerate(wire.chunks(reply, body)):
                if isinstance(item, Drop) and count == item.after_chunks:
                    if not item.clean:
                        self._drop(request)
                        return response
                    break
                if isinstance(item, StreamError) and count == item.after_chunks:
                    await response.write(wire.stream_error(item.error_type, item.message))
                    break
                if isinstance(item, Stall) and count == item.after_chunks:
                    await asyncio.sleep(item.seconds)
                if isinstance(item, EndlessLine) and count == item.after_chunks:
                    await response.write(b"data: ")
                    block = _SHORT_LINES if item.short_lines else _BLOCK
                    while True:
                        await self._sent(response, block)
                if delay and count:
                    await asyncio.sleep(delay)
                if isinstance(item, Trickle):
                    for i in range(len(chunk)):
                        await asyncio.sleep(item.interval)
                        await response.write(chunk[i : i + 1])
                    continue
                await response.write(chunk)
                self.chunks_sent += 1
            await response.write_eof()
        except ConnectionError:
            pass  # the client went away (it timed out or was cancelled)
        return response


# --- standalone --------------------------------------------------------------


async def _main(args: argparse.Namespace) -> None:
    local = LocalServer(args.local, args.window) if args.local else None
    server = FakeProvider(host=args.host, port=args.port, chunk_delay=args.chunk_delay, local=local)
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            server.script_json(json.load(f))
    await server.serve()
    tmp = f"{args.port_file}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.port))
    os.replace(tmp, args.port_file)  # readers never see a half-written port
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.shutdown()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI/Anthropic provider for tests.")
    parser.add_argument("--port-file", required=True, help="write the listening port here")
    parser.add_argument("--script", help="JSON file: a list of script items to queue")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a random free port")
    parser.add_argument(
        "--chunk-delay", type=float, default=0.0, help="seconds between stream chunks"
    )
    parser.add_argument(
        "--local", choices=KINDS, help="serve a small-window model as this local server does"
    )
    parser.add_argument("--window", type=int, default=4096, help="its window, in tokens")
    asyncio.run(_main(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
