"""One assistant turn: context -> provider stream -> saved message.

Shared by print mode and the TUI. The caller sees every stream event through
``on_event``; the finished (or aborted, or failed) assistant message is always
appended to the session, so what was streamed is never lost.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Awaitable, Callable

from core.context import Context
from core.entries import Entry
from core.messages import Message
from core.providers.base import ChatRequest, ProviderError, StreamEvent
from core.session import Session
from core.settings import Settings

EventHandler = Callable[[StreamEvent], None]
WaitHandler = Callable[[float, ProviderError], Awaitable[None] | None]


@dataclass(frozen=True)
class Target:
    """Where a model's requests go: the provider-facing model name, base URL and key."""

    model: str
    api_base: str | None
    api_key: str | None


def resolve_target(model: str, settings: Settings, api_base: str | None) -> Target:
    """Custom endpoints from the config are OpenAI-compatible: ``NAME/model`` is sent
    as ``openai/model`` to the endpoint's base URL with the key from its env var."""
    endpoint = settings.endpoint_for(model)
    if endpoint is not None:
        bare = model.split("/", 1)[1] if model.startswith(endpoint.name + "/") else model
        return Target(model=f"openai/{bare}", api_base=endpoint.base_url, api_key=endpoint.api_key)
    return Target(model=model, api_base=api_base, api_key=None)


@dataclass
class TurnResult:
    entry: Entry
    error: ProviderError | None
    context: Context

    @property
    def message(self) -> Message:
        return self.entry.payload  # type: ignore[return-value]


async def run_turn(
    session: Session,
    settings: Settings,
    *,
    model: str,
    thinking: str = "off",
    api_base: str | None = None,
    on_event: EventHandler | None = None,
    on_wait: WaitHandler | None = None,
) -> TurnResult:
    """Stream one reply to the session's path and append it.

    Cancellation (the user pressed Esc) appends what arrived, marked ``aborted``,
    then re-raises.
    """
    from core.providers.assemble import MessageBuilder
    from core.providers.registry import get_provider
    from core.providers.retry import stream_with_retry

    context = session.context(model, default_thinking=thinking, image_budget=settings.image_budget)
    target = resolve_target(context.model, settings, api_base)
    images = {}
    for sha in context.image_shas:
        blob = await session.store.get_blob(sha)
        if blob is not None:
            images[sha] = blob.data
    request = ChatRequest(
        model=target.model,
        messages=context.messages,
        system=context.system,
        thinking=context.thinking,
        api_base=target.api_base,
        api_key=target.api_key,
        images=images,
    )
    provider = get_provider(target.model)
    builder = MessageBuilder(model=context.model, provider=provider.name)
    try:
        async for event in stream_with_retry(
            provider, request, max_attempts=settings.retries + 1, on_wait=on_wait
        ):
            builder.add(event)
            if on_event is not None:
                on_event(event)
    except asyncio.CancelledError:
        message = builder.finish_aborted()
        await asyncio.shield(session.append(message))
        raise
    message = builder.finish()
    entry = await session.append(message)
    return TurnResult(entry=entry, error=builder.error, context=context)
