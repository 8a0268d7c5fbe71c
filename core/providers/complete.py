"""One request streamed to the end for its text: what summaries need."""

from __future__ import annotations

from core.providers.base import ChatRequest
from core.providers.retry import OnWait
from core.sessions.messages import Usage
from core.settings import Settings


class CompletionError(Exception):
    """The request gave no usable text; the message says why."""


async def complete_text(
    request: ChatRequest, model: str, settings: Settings, on_wait: OnWait | None = None
) -> tuple[str, Usage | None]:
    """Stream ``request`` with the usual retries; its stripped text and usage."""
    from core.providers.assemble import MessageBuilder
    from core.providers.limits import StreamLimits, bounded
    from core.providers.registry import get_provider
    from core.providers.retry import stream_with_retry

    provider = get_provider(request.model)
    builder = MessageBuilder(model=model, provider=provider.name)
    attempts = stream_with_retry(
        provider, request, max_attempts=settings.retries + 1, on_wait=on_wait
    )
    async for event in bounded(attempts, StreamLimits.of(settings)):
        builder.add(event)
    if builder.error is not None:
        raise CompletionError(f"the summary request failed: {builder.error.message}")
    message = builder.finish()
    if message.stop_reason == "interrupted":
        raise CompletionError("the summary request was cut off before it finished")
    text = builder.text.strip()
    if not text:
        raise CompletionError("the model returned an empty summary")
    return text, message.usage
