"""The models no SDK of ours speaks (gemini, ollama, openrouter, ...) through
``litellm.acompletion``.

litellm makes up a ``finish_reason`` of ``"stop"`` for a stream that simply
ends (a dropped connection litellm did not notice); the finish reason the
provider really sent is on the stream wrapper as ``received_finish_reason``,
so that is what decides between a finished and an interrupted reply.

The bodies litellm reads are bounded by our shared httpx client, whose hooks
read an error body (endless, or a gzip bomb) only up to
:data:`core.providers.bodies.ERROR_BODY_LIMIT` and refuse a line or an event
longer than :data:`core.providers.sse.MAX_LINE` (:mod:`core.providers.line_limit`).
litellm is given that client through public settings only: as its documented
``litellm.aclient_session`` for the providers it sends through the ``openai``
SDK, and as the ``client`` of the request (an ``AsyncHTTPHandler`` over it) for
the routes of :data:`OWN_HANDLER_ROUTES`, which it would otherwise send with a
client it makes per provider. Any other route keeps litellm's own client,
bounded in time (core.providers.limits) but not in size.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from core.providers import openai_format, sdk
from core.providers.base import ChatRequest, StreamEvent
from core.providers.cost import load_table
from core.providers.errors import to_provider_error
from core.providers.openai_chunks import ChunkReader
from core.providers.openai_provider import httpx_client
from core.providers.pacing import LoopShare

OWN_HANDLER_ROUTES = frozenset(
    {
        "gemini",
        "vertex_ai_beta",
        "ollama",
        "ollama_chat",
        "openrouter",
        "groq",
        "mistral",
        "deepseek",
        "together_ai",
        "hosted_vllm",
        "xai",
    }
)
"""litellm providers it reads with its own ``AsyncHTTPHandler``, which they
take as the request's ``client`` (the ``openai`` SDK's routes take only an
SDK client there): each is tested against the fake provider."""


def completion_params(request: ChatRequest) -> dict[str, Any]:
    """Keyword arguments for ``litellm.acompletion``."""
    params: dict[str, Any] = {
        "model": request.model,
        "messages": openai_format.to_messages(request),
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": request.timeout,
        "max_retries": 0,  # the OpenAI client's own retries; ours are in core.providers.retry
        "drop_params": True,  # e.g. reasoning_effort for a model without it: dropped, not an error
    }
    if request.api_base:
        params["api_base"] = request.api_base
    if request.api_key:
        params["api_key"] = request.api_key
    if request.max_tokens:
        params["max_tokens"] = request.max_tokens
    if request.thinking != "off":
        params["reasoning_effort"] = request.thinking
    if request.tools:
        params["tools"] = openai_format.tools(request)
    return params


class LiteLLMProvider:
    name = "litellm"

    def preload(self, api_base: str | None = None) -> None:
        """litellm, whatever ``api_base`` is: its clients read their own trust store."""
        sdk.preload("litellm", load_table)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        reader = ChunkReader(request.model)
        share = LoopShare(request.pace)
        try:
            litellm: Any = await sdk.loaded("litellm", load_table)
            # this loop's client (litellm never closes it), as the last one may be closed
            client = await httpx_client(request.api_base or "https://")
            litellm.aclient_session = client
            params = completion_params(request)
            if _route(litellm, request) in OWN_HANDLER_ROUTES:
                params["client"] = _handler(litellm, client, request.timeout)
            response = await litellm.acompletion(**params)
            try:
                async for chunk in response:
                    for event in reader.events(chunk):
                        yield event
                    await share.tick()
            finally:
                await response.aclose()
            # litellm's chunks say "stop" for a stream that just ended: its wrapper
            # keeps the reason the provider really sent.
            reader.finish = getattr(response, "received_finish_reason", None) or getattr(
                response, "intermittent_finish_reason", None
            )
        except Exception as exc:  # every failure becomes an event: the stream never raises
            reader.error = to_provider_error(exc, api_key=request.api_key)
        for event in reader.ending():
            yield event


def _route(litellm: Any, request: ChatRequest) -> str:
    """The litellm provider that serves ``request`` (``gemini``, ``ollama_chat``, ...)."""
    return str(litellm.get_llm_provider(model=request.model, api_base=request.api_base)[1])


def _handler(litellm: Any, client: Any, timeout: float) -> Any:
    """litellm's HTTP handler sending over ``client`` with the request's
    timeout; a client it makes again to retry a refused connection gets
    ``client``'s hooks."""
    handler = litellm.AsyncHTTPHandler(timeout=timeout, event_hooks=client.event_hooks)
    handler.client = client
    return handler
