"""How many requests this process sends one local or custom server at once.

A server with one slot (llama-cpp-python's by default, llama.cpp's
``llama-server`` started with one, Ollama with ``OLLAMA_NUM_PARALLEL=1``)
cuts off or queues a request that comes while it answers another: two
summaries, the columns of a comparison or a window question beside a reply
would cancel each other. So every request to such a server first takes one
of its slots, and gives it back when its stream ends: ``parallel`` of the
``[[endpoints]]`` entry whose ``base_url`` has its origin, else 1. Hosted
providers (no base URL of the user's) are not bounded here.

The slots of an origin are a semaphore of the running event loop (asyncio
binds one to a loop), kept while that loop lives.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from core.providers.base import EndpointSlots
from core.providers.endpoint_window import server_root
from core.providers.target import Target, origin
from core.settings import Settings

DEFAULT_PARALLEL = 1
"""For a server no ``[[endpoints]]`` entry describes: as a single-slot one."""

_held: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[EndpointSlots, asyncio.Semaphore]]
_held = weakref.WeakKeyDictionary()


def slots_for(target: Target, settings: Settings) -> EndpointSlots | None:
    """The bound on ``target``'s server; None for a hosted provider."""
    root = server_root(target)
    if root is None:
        return None
    wanted = origin(root)
    for endpoint in settings.endpoints:
        if origin(endpoint.base_url) == wanted:
            return EndpointSlots(wanted, endpoint.parallel)
    return EndpointSlots(wanted, DEFAULT_PARALLEL)


@asynccontextmanager
async def slot(slots: EndpointSlots | None) -> AsyncIterator[None]:
    """Hold one of ``slots`` (waiting for it) for the body's time; no wait for None."""
    if slots is None:
        yield
        return
    semaphores = _held.setdefault(asyncio.get_running_loop(), {})
    semaphore = semaphores.setdefault(slots, asyncio.Semaphore(slots.parallel))
    async with semaphore:
        yield
