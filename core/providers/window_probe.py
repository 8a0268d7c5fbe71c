"""The window of a server that says it nowhere, from its own refusal.

llama-cpp-python's server reports its window nowhere, and a streamed request
over it gets an event stream that just ends. A request that is not streamed
is refused in words: "Requested tokens (N) exceed context window of W" (vLLM:
"maximum context length is W"). So after such an ended stream, one question
it is sure to refuse (twice the refused size, one token of answer asked for)
makes it say W. It is asked between turns, and waits for a slot of the
server (:mod:`core.providers.slots`): a single-slot server cuts off the
request it is answering when another comes.
"""

from __future__ import annotations

import re

from core.providers import bodies
from core.providers.base import EndpointSlots
from core.providers.endpoint_window import MAX_WINDOW, client_for, served_name
from core.providers.slots import slot
from core.providers.target import Target

ASK_TIMEOUT = 10.0
"""Seconds for the question: the server counts the prompt's tokens, then refuses."""
_WINDOW_IN_WORDS = re.compile(
    r"context window of (\d{1,10})|maximum context length is (\d{1,10})", re.IGNORECASE
)


def window_in_refusal(text: str) -> int | None:
    """W from a refusal that names the window; None when it names none."""
    match = _WINDOW_IN_WORDS.search(text)
    if match is None:
        return None
    tokens = int(match.group(1) or match.group(2))
    return tokens if 0 < tokens <= MAX_WINDOW else None


async def ask_by_refusal(
    target: Target, refused: int, slots: EndpointSlots | None = None
) -> int | None:
    """The window ``target``'s server names when refusing a question of about
    twice ``refused`` tokens; None when it answers, or says no window. The
    question waits for one of the server's ``slots``."""
    if not target.api_base:
        return None
    base = target.api_base.rstrip("/")
    question = {
        "model": served_name(target.model),
        "messages": [{"role": "user", "content": "hi " * (2 * refused)}],
        "max_tokens": 1,
        "stream": False,
    }
    headers = {"Authorization": f"Bearer {target.api_key}"} if target.api_key else {}
    async with slot(slots), client_for(base) as (client, failures):
        try:
            async with client.stream(
                "POST",
                base + "/chat/completions",
                json=question,
                headers=headers,
                timeout=ASK_TIMEOUT,
            ) as response:
                if response.status_code < 400:
                    return None  # it fits: this server's window is larger
                content, _ = await bodies.read_head(response, bodies.PROBE_BODY_LIMIT)
        except failures:
            return None
    return window_in_refusal(content.decode("utf-8", "replace"))
