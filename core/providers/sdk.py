"""The provider SDKs (httpx, and the ``mcp`` package), imported in a background
thread.

The clients take from a fifth of a second (httpx) to seconds (litellm) to import,
which on the event loop would freeze a UI. :func:`preload` starts an import
in a thread of its own (the app calls it after its first frame, for the
model it will use); a request awaits :func:`loaded`, which starts the import
if nobody did and waits for it without blocking the loop. The plain
functions (:func:`litellm`, :func:`anthropic`, :func:`openai`) block until
the module is there: for worker threads and scripts.

litellm is set up before its import so that it never fetches its price map
from the network, and silenced after it: it prints help banners and logs to
stderr, which would corrupt a full-screen terminal UI.

``TANGENTS_SDK_IMPORT_DELAY`` (seconds) holds every background import back
that long: end-to-end tests use it to show that nothing waits for an SDK
that a request does not need yet.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from types import ModuleType

SDKS = ("httpx", "openai", "anthropic", "litellm", "mcp")
_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
_DELAY_ENV = "TANGENTS_SDK_IMPORT_DELAY"

_imports: dict[str, Future[ModuleType]] = {}
_lock = threading.Lock()
_one_import_at_a_time = threading.Lock()
"""Two threads importing packages that share dependencies can each hold one
module's import lock and want the other's: Python then hands one of them a
partially initialised module (seen as a fan-out's third reply failing with
"partially initialized module 'httpx2' has no attribute 'Timeout'"). Imports
hold the GIL anyway, so running them one after another costs nothing."""


Prepare = Callable[[ModuleType], None]
"""Run in the import thread after the import: whatever else the SDK makes on
its first request (lazily imported parts, schemas), done off the loop."""


def preload(name: str, prepare: Prepare | None = None) -> Future[ModuleType]:
    """Start importing SDK ``name`` in a daemon thread (once); its future. A
    daemon thread: a program that ends while it imports does not wait for it."""
    if name not in SDKS:
        raise ValueError(f"unknown SDK: {name!r}")
    with _lock:
        future = _imports.get(name)
        if future is None:
            future = _imports[name] = Future()
            # Running: an awaiter that gives up (:func:`loaded` cancelled) cannot
            # cancel it for the others.
            future.set_running_or_notify_cancel()
            threading.Thread(
                target=_import, args=(name, future, prepare), name=f"import-{name}", daemon=True
            ).start()
    return future


async def loaded(name: str, prepare: Prepare | None = None) -> ModuleType:
    """SDK ``name``, awaiting its import in the background if it is not done."""
    future = preload(name, prepare)
    if future.done():
        return future.result()
    return await asyncio.wrap_future(future)


def is_loaded(name: str) -> bool:
    future = _imports.get(name)
    return future is not None and future.done() and future.exception() is None


def litellm() -> ModuleType:
    return preload("litellm").result()


def anthropic() -> ModuleType:
    return preload("anthropic").result()


def openai() -> ModuleType:
    return preload("openai").result()


def _without_httpx_cli() -> None:
    """Every SDK here imports httpx, and httpx imports its command line at its
    own import (``httpx._main``: click, rich's progress bars and syntax
    highlighting, pygments' lexers: much of the first request's wait) only
    to offer ``httpx.main``, which nothing here runs: a stand-in is
    registered in its place first."""
    if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
        cli = ModuleType("httpx._main")
        cli.main = _no_httpx_cli  # type: ignore[attr-defined]
        sys.modules[cli.__name__] = cli


def _no_httpx_cli() -> None:
    raise SystemExit("the httpx command line is not loaded in Tangents")


def _import(name: str, future: Future[ModuleType], prepare: Prepare | None) -> None:
    try:
        delay = float(os.environ.get(_DELAY_ENV) or 0)
        if delay > 0:
            time.sleep(delay)
        if name == "litellm":
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        _without_httpx_cli()
        with _one_import_at_a_time:  # ``prepare`` imports lazily loaded parts too
            module = importlib.import_module(name)
            if name == "litellm":
                setattr(module, "suppress_debug_info", True)  # noqa: B010  # not in its stubs
                # counting must not reach the network
                setattr(module, "disable_hf_tokenizer_download", True)  # noqa: B010
                for logger in _LITELLM_LOGGERS:
                    logging.getLogger(logger).setLevel(logging.CRITICAL)
            if prepare is not None:
                prepare(module)
    except BaseException as error:  # the request that awaits it reports it
        future.set_exception(error)
    else:
        future.set_result(module)
