"""HTTP clients kept for the life of the event loop, so that turns reuse connections.

A client made for each request and closed after it closed its connection with
it: every turn opened a new one (a TCP connect, and a TLS handshake for a
remote endpoint: one or two round trips before the first token). One client per
kind, per loop, keeps them in its pool; each request passes its own timeout.
Clients belong to the loop they were made on (their connections are its
transports), so another loop (a test's, the print mode's) gets its own; the
app closes its loop's clients when it ends (:func:`aclose`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any, Protocol, TypeVar


class _Client(Protocol):
    @property
    def is_closed(self) -> bool: ...

    async def aclose(self) -> None: ...


C = TypeVar("C", bound=_Client)

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def shared(kind: str, make: Callable[[], C]) -> C:
    """The running loop's client of ``kind``, made by ``make`` the first time
    (and again if it was closed)."""
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    client = clients.get(kind)
    if client is None or client.is_closed:
        client = clients[kind] = make()
    return client


async def aclose() -> None:
    """Close the running loop's clients and their connections."""
    for client in _clients.pop(asyncio.get_running_loop(), {}).values():
        await client.aclose()
