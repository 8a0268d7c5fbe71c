"""The TLS context every HTTP client here shares, its trust store read only
when a connection needs it.

httpx reads its CA bundle (certifi's, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``)
when a context is made, long enough to notice and holding the GIL, so on a
loop that is a frozen UI and in a thread it is the loop's time all the same. A request to a
plain-http server (llama.cpp, vLLM, LM Studio, Ollama on this machine) never
needs it. So the shared context is made without it (:func:`context`, cheap)
and reads it in :func:`load` (in a thread, ahead of the first https request:
:func:`ready`, or an SDK's ``prepare``), or at the latest in its first TLS
handshake (a plain-http server that redirects to https, a proxy spoken to
over TLS), so that no connection is ever made without it.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import sys
import threading
from concurrent.futures import Future
from typing import Any
from urllib.parse import urlsplit


class TrustStoreOnFirstUse(ssl.SSLContext):
    """What ``ssl.create_default_context`` makes for a client (as httpx does),
    with its trust store loaded by :meth:`load_trust_store`, at the latest by
    the first socket or BIO it wraps."""

    _lock: threading.Lock
    _loaded: bool

    def __new__(cls) -> TrustStoreOnFirstUse:
        # A client's protocol: certificates and host names verified.
        context = super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)
        if sys.version_info >= (3, 13):  # as create_default_context does from 3.13
            context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
        keylog = os.environ.get("SSLKEYLOGFILE")
        if keylog and not sys.flags.ignore_environment:
            context.keylog_filename = keylog
        context._lock = threading.Lock()
        context._loaded = False
        return context

    @property
    def trust_store_loaded(self) -> bool:
        return self._loaded

    def load_trust_store(self) -> None:
        """Read the CA bundle httpx would (once; other callers wait for it)."""
        with self._lock:
            if not self._loaded:
                self.load_verify_locations(**_trust_store())
                self._loaded = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self.load_trust_store()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self.load_trust_store()
        return super().wrap_bio(*args, **kwargs)


def _trust_store() -> dict[str, str]:
    """Where httpx's default context (``verify=True``) reads its CA certificates."""
    if os.environ.get("SSL_CERT_FILE"):
        return {"cafile": os.environ["SSL_CERT_FILE"]}
    if os.environ.get("SSL_CERT_DIR"):
        return {"capath": os.environ["SSL_CERT_DIR"]}
    import certifi

    return {"cafile": certifi.where()}


_shared: TrustStoreOnFirstUse | None = None
_making = threading.Lock()


def context() -> TrustStoreOnFirstUse:
    """The context for every client (``verify=``): made at once, without its
    trust store; one for all threads (the warm-up's and the loop's may ask at once)."""
    global _shared
    with _making:
        if _shared is None:
            _shared = TrustStoreOnFirstUse()
        return _shared


def load() -> None:
    """Read the trust store now (blocking: in a thread, off the loop)."""
    context().load_trust_store()


_loading: Future[None] | None = None
_loading_lock = threading.Lock()


def preload() -> Future[None]:
    """Start reading the trust store in a daemon thread (once); its future."""
    global _loading
    with _loading_lock:
        if _loading is None:
            _loading = Future()
            threading.Thread(
                target=_load_into, args=(_loading,), name="tls-trust-store", daemon=True
            ).start()
        return _loading


def _load_into(future: Future[None]) -> None:
    try:
        load()
    except BaseException as error:  # the request that awaits it reports it
        future.set_exception(error)
    else:
        future.set_result(None)


def needs_trust_store(url: str) -> bool:
    """Whether requests to ``url`` are made over TLS."""
    return urlsplit(url).scheme.lower() != "http"


async def ready(url: str) -> ssl.SSLContext:
    """The context for a client whose requests go to ``url``: for https, with
    its trust store read (in a thread, awaited without blocking the loop)."""
    shared = context()
    if needs_trust_store(url) and not shared.trust_store_loaded:
        await asyncio.wrap_future(preload())
    return shared
