"""A chat-completions stream over an httpx client alone: POST the body, read the server-sent events' data (:mod:`core.providers.sse`) as JSON.

What the openai SDK would do with the same request, without importing it
(~1.5 s and ~60 MB of models: pydantic and every type of the API, none of
them used to read a stream): the ``Authorization: Bearer`` header, an error
status raised with the response's JSON body (its head:
:mod:`core.providers.bodies`) and headers (classified by
:func:`core.providers.errors.to_provider_error`, which reads ``status_code``,
``body`` and ``response.headers``), an ``error`` object inside the stream
raised the same way, ``[DONE]`` as the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from core import values
from core.providers import bodies, sse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DRAIN_SECONDS = 1.0
"""The longest a body is read after ``[DONE]`` (see :func:`_drain`)."""


class APIStatusError(Exception):
    """The server answered with an error status (before the stream) or sent an
    ``error`` object in it (``status_code`` is then None)."""

    def __init__(self, message: str, status_code: int | None, body: object, response: Any) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.body = body
        self.response = response


@asynccontextmanager
async def chunks(
    client: Any, base_url: str, api_key: str, body: dict[str, Any], *, timeout: float | None
) -> AsyncIterator[AsyncIterator[Any]]:
    """The stream's chunks (parsed JSON) as an async iterator, for as long as the block runs.

    ``client`` is an ``httpx.AsyncClient`` (shared: ``timeout``, in seconds or
    None for none, is the request's own).
    """
    headers = {"Authorization": f"Bearer {api_key}", "Accept": "text/event-stream"}
    url = base_url.rstrip("/") + "/chat/completions"
    request = client.stream("POST", url, json=body, headers=headers, timeout=timeout)
    async with request as response:
        if response.status_code >= 400:
            content, _ = await bodies.read_head(response, bodies.ERROR_BODY_LIMIT)
            raise _status_error(response, content)
        yield _events(response)


async def _drain(events: AsyncIterator[Any]) -> None:
    """Read the body to its end after ``[DONE]`` (as the SDK does), so that the
    connection goes back to the client's pool for the next request: a body
    closed unread closes its connection, and every turn opened a new one (a
    TLS handshake, for a remote endpoint). A server that keeps the body open
    is given :data:`DRAIN_SECONDS`."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in events:
                pass


def _status_error(response: Any, content: bytes) -> APIStatusError:
    """The error for a status of 400 and up, from the head of its body."""
    text = content.decode("utf-8", "replace")
    try:
        body: object = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        body = body.get("error", body)
    return APIStatusError(
        f"Error code: {response.status_code} - {text}", response.status_code, body, response
    )


async def _events(response: Any) -> AsyncIterator[Any]:
    events = sse.events(response)
    async for _, text in events:
        if text.startswith("[DONE]"):
            await _drain(events)
            return
        if not text:
            continue  # an event: line with no data
        chunk = values.parse(text, "a stream chunk")
        if isinstance(chunk, dict) and chunk.get("error"):
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else None
            raise APIStatusError(
                message if isinstance(message, str) and message else "error in the stream",
                None,
                error,
                response,
            )
        yield chunk
