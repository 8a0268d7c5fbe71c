"""Ask a server which models it serves, for the model picker.

A local server (llama.cpp, vLLM, LM Studio, any OpenAI-compatible one) lists
them at ``/v1/models`` (``{"data": [{"id": ...}]}``), Ollama at ``/api/tags``
(``{"models": [{"name": ...}]}``); litellm's table knows none of them. No key
is sent: listing models needs none on a local server, and a question must not
carry a key to a host that did not ask for one. The answer is read up to
:data:`MAX_ANSWER_BYTES`, and only names that are short printable text count.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from core.providers import sdk, tls

ASK_TIMEOUT = 3.0
"""Seconds for the questions together."""
MAX_ANSWER_BYTES = 1 << 20
MAX_MODELS = 1_000
_MAX_NAME = 200


def model_names(answer: Any) -> list[str]:
    """The model names in an OpenAI-style or Ollama list (pure)."""
    if not isinstance(answer, Mapping):
        return []
    items = answer.get("data")
    key = "id"
    if not isinstance(items, list):
        items, key = answer.get("models"), "name"
    if not isinstance(items, list):
        return []
    names = [item.get(key) for item in items[:MAX_MODELS] if isinstance(item, Mapping)]
    return [
        name
        for name in dict.fromkeys(names)
        if isinstance(name, str) and 0 < len(name) <= _MAX_NAME and name.isprintable()
    ]


async def served_models(root: str, timeout: float = ASK_TIMEOUT) -> list[str]:
    """The models the server at ``root`` (its URL without ``/v1``) lists; empty
    when it lists none or does not answer within ``timeout`` seconds."""
    httpx = await sdk.loaded("httpx")
    verify = await tls.ready(root)

    async def ask(client: Any, path: str) -> list[str]:
        try:
            async with client.stream("GET", root + path, timeout=timeout) as response:
                if response.status_code != 200:
                    return []
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        return []
            return model_names(json.loads(body))
        except (httpx.HTTPError, ValueError):
            return []

    async with httpx.AsyncClient(trust_env=False, verify=verify) as client:
        try:
            listed = await asyncio.wait_for(
                asyncio.gather(ask(client, "/v1/models"), ask(client, "/api/tags")), timeout
            )
        except TimeoutError:
            return []
    return list(dict.fromkeys(name for names in listed for name in names))
