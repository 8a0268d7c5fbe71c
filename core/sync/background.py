"""Run a sync off the caller's event loop: on a loop of its own, in a thread.

Reading journals, hashing files and git's pull and push block; in a thread they
never hold up a key. The thread is a daemon, so a program that quits never
waits for it: a sync cut short is safe (journal lines are written before the
database changes, see :mod:`core.sync.engine`) and the next one completes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def in_thread(work: Callable[[], Awaitable[T]], name: str = "tangents-sync") -> asyncio.Future[T]:
    """Start ``work()`` on a new event loop in a daemon thread; the future (of
    the running loop) gets its result or its exception."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: T | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    async def main() -> T:
        return await work()

    def body() -> None:
        try:
            result = asyncio.run(main())
        except BaseException as error:  # handed to the caller's loop, not lost
            outcome: tuple[T | None, BaseException | None] = (None, error)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the caller's loop is gone: nobody waits
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=body, name=name, daemon=True).start()
    return future
