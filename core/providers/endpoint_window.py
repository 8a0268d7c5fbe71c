"""Ask a local server how large a model's context window is.

Local servers know the window they were started with, and litellm's table
does not: vLLM's ``/v1/models`` gives ``max_model_len``; llama.cpp's server
gives ``n_ctx`` in ``/props`` (and the trained length in the ``meta`` of its
``/v1/models``); LM Studio's ``/api/v0/models/NAME`` gives
``loaded_context_length`` / ``max_context_length``; Ollama's ``/api/ps`` gives
the ``context_length`` of a loaded model and ``/api/show`` the model's own
length and any ``num_ctx`` parameter. Ollama cuts every prompt to its
``num_ctx`` (4,096 unless the model or server sets another) without an error,
so that, not the model's length, is its window.

Every question is asked at once with one short timeout; a server that does
not answer one of them simply does not count. The parsers are pure.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from core import values
from core.providers import bodies, sdk, tls
from core.providers.target import Target

ASK_TIMEOUT = 3.0
"""Seconds for all the questions together."""
OLLAMA_DEFAULT_NUM_CTX = 4_096
"""The context Ollama gives a model whose parameters set no ``num_ctx``."""
_LOCAL_DEFAULTS = {
    "ollama": "http://localhost:11434",
    "ollama_chat": "http://localhost:11434",
    "lm_studio": "http://localhost:1234/v1",
}
_MAY_BE_LOCAL = {"openai", "hosted_vllm", "llamafile", "lm_studio", "ollama", "ollama_chat"}
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.MULTILINE)


def server_root(target: Target) -> str | None:
    """The URL of the server to ask for ``target``'s model, without its ``/v1``;
    None for a hosted provider (litellm's table knows those)."""
    provider = target.model.split("/", 1)[0] if "/" in target.model else ""
    base = target.api_base or _LOCAL_DEFAULTS.get(provider)
    if not base or provider not in _MAY_BE_LOCAL:
        return None
    base = base.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def served_name(model: str) -> str:
    """The model's name as the server knows it (the provider prefix dropped)."""
    return model.split("/", 1)[1] if "/" in model else model


MAX_WINDOW = 1_000_000_000
"""The largest window believed (a server's answer is checked, :mod:`core.values`):
far above any model's, small enough for every budget computed from it."""


def _positive(value: Any) -> int | None:
    """A window from an answer: a whole number from 1 to :data:`MAX_WINDOW`, else None."""
    try:
        return values.count(value, "a window", MAX_WINDOW) or None
    except values.BadValue:
        return None


def _positive_text(digits: str) -> int | None:
    """:func:`_positive` for a window written in decimal."""
    try:
        return _positive(values.number_text(digits, "a window"))
    except values.BadValue:
        return None


def _entry(models: Any, name: str) -> Mapping[str, Any] | None:
    """The entry of ``name`` in a ``{"data": [...]}`` list (or the only one there)."""
    data = models.get("data") if isinstance(models, Mapping) else None
    if not isinstance(data, list):
        return None
    entries = [item for item in data if isinstance(item, Mapping)]
    for item in entries:
        if item.get("id") == name:
            return item
    return entries[0] if len(entries) == 1 else None


def from_llama_props(props: Any) -> int | None:
    """llama.cpp's ``/props``: ``default_generation_settings.n_ctx`` (or ``n_ctx``)."""
    if not isinstance(props, Mapping):
        return None
    settings = props.get("default_generation_settings")
    nested = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    return _positive(nested) or _positive(props.get("n_ctx"))


def from_openai_models(models: Any, name: str) -> tuple[int, str] | None:
    """``/v1/models``: vLLM's ``max_model_len``, else llama.cpp's ``meta.n_ctx_train``."""
    entry = _entry(models, name)
    if entry is None:
        return None
    if (tokens := _positive(entry.get("max_model_len"))) is not None:
        return tokens, "vllm"
    meta = entry.get("meta")
    if isinstance(meta, Mapping):
        found = _positive(meta.get("n_ctx")) or _positive(meta.get("n_ctx_train"))
        if found is not None:
            return found, "llama.cpp"
    return None


def from_lm_studio(model: Any) -> int | None:
    """LM Studio's ``/api/v0/models/NAME``: the loaded length, else the largest."""
    if not isinstance(model, Mapping):
        return None
    return _positive(model.get("loaded_context_length")) or _positive(
        model.get("max_context_length")
    )


def from_ollama(show: Any, running: Any, name: str) -> int | None:
    """Ollama: a loaded model's ``context_length`` (``/api/ps``), else the
    ``num_ctx`` its parameters set, else Ollama's default capped by the model's
    own length (``/api/show``)."""
    if isinstance(running, Mapping) and isinstance(running.get("models"), list):
        for item in running["models"]:
            if isinstance(item, Mapping) and name in (item.get("name"), item.get("model")):
                if (tokens := _positive(item.get("context_length"))) is not None:
                    return tokens
    if not isinstance(show, Mapping):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str) and (match := _NUM_CTX.search(parameters)):
        return _positive_text(match.group(1))
    info = show.get("model_info")
    lengths = [
        value
        for key, value in (info.items() if isinstance(info, Mapping) else ())
        if str(key).endswith(".context_length") and _positive(value)
    ]
    if not lengths:
        return None
    return min(OLLAMA_DEFAULT_NUM_CTX, lengths[0])


async def ask_window(root: str, name: str, timeout: float = ASK_TIMEOUT) -> tuple[int, str] | None:
    """``(tokens, source)`` from the first server kind that answers for model
    ``name`` at ``root``; None when none does in ``timeout`` seconds. Asked
    while the first request is prepared, with httpx (and the TLS trust store
    for https, read off the loop)."""
    async with client_for(root) as (client, failures):

        async def get(path: str, body: dict[str, Any] | None = None) -> Any:
            method = "GET" if body is None else "POST"
            try:
                async with client.stream(
                    method, root + path, json=body, timeout=timeout
                ) as response:
                    if response.status_code != 200:
                        return None
                    content, more = await bodies.read_head(response, bodies.PROBE_BODY_LIMIT)
                return None if more else json.loads(content)
            except failures:
                return None

        try:
            props, models, studio, show, running = await asyncio.wait_for(
                asyncio.gather(
                    get("/props"),
                    get("/v1/models"),
                    get(f"/api/v0/models/{name}"),
                    get("/api/show", {"model": name}),
                    get("/api/ps"),
                ),
                timeout,
            )
        except TimeoutError:
            return None
    if (tokens := from_llama_props(props)) is not None:
        return tokens, "llama.cpp"
    if (found := from_openai_models(models, name)) is not None:
        return found
    if (tokens := from_lm_studio(studio)) is not None:
        return tokens, "lm-studio"
    if (tokens := from_ollama(show, running, name)) is not None:
        return tokens, "ollama"
    return None


@asynccontextmanager
async def client_for(root: str) -> AsyncIterator[tuple[Any, tuple[type[Exception], ...]]]:
    """A client for ``root`` (no proxy: the questions go to the server itself)
    and the exceptions a question fails with (a body that is not JSON too)."""
    httpx = await sdk.loaded("httpx")
    verify = await tls.ready(root)
    async with httpx.AsyncClient(trust_env=False, verify=verify) as client:
        yield client, (httpx.HTTPError, ValueError)
