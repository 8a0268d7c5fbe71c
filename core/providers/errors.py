"""Turn any exception from the anthropic SDK, litellm, httpx or aiohttp into a
:class:`ProviderError` with a kind, a short sanitized detail and, for rate
limits, the server's Retry-After.

Classification works on class names, status codes and the error body rather
than on imported exception classes, so this module never imports an SDK and
also understands the errors those SDKs let through unwrapped (httpx/httpx2
read errors mid-stream, aiohttp payload errors inside litellm).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from core.providers.base import ProviderError
from core.providers.keys import provider_keys_in_use
from core.sanitize import redact, redact_fragments, strip_control
from core.values import BadValue

DETAIL_LIMIT = 300

_TIMEOUT_CLASSES = {
    "APITimeoutError",
    "Timeout",
    "TimeoutException",
    "ReadTimeout",
    "ConnectTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "TimeoutError",
    "ServerTimeoutError",
    "SocketTimeoutError",
}
_CONNECTION_CLASSES = {
    "APIConnectionError",
    "ConnectError",
    "ReadError",
    "WriteError",
    "RemoteProtocolError",
    "NetworkError",
    "ConnectionError",
    "ClientConnectorError",
    "ClientConnectionError",
    "ClientPayloadError",
    "ServerDisconnectedError",
    "TransferEncodingError",
}
_BODY_TYPES = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limit",
    "authentication_error": "auth",
    "permission_error": "auth",
    "api_error": "server",
    "server_error": "server",
    "timeout_error": "timeout",
    "context_length_exceeded": "context_overflow",
}
_CONTEXT_OVERFLOW = re.compile(
    # OpenAI, Anthropic, vLLM, llama.cpp (both servers), Ollama, LM Studio.
    r"prompt (?:is )?too long|context[_ ]length|context window|context size|"
    r"context the overflows|too many tokens",
    re.IGNORECASE,
)
_REFUSED = re.compile(r"content[_ ]filter|content[_ ]policy|ContentPolicyViolation", re.IGNORECASE)
_AUTH_TEXT = re.compile(
    r"missing credentials|api_key client option must be set|no api key", re.IGNORECASE
)
_TIMEOUT_TEXT = re.compile(r"timed out|timeout on reading", re.IGNORECASE)
_CONNECTION_TEXT = re.compile(
    r"connection error|connection refused|cannot connect|payload is not completed|"
    r"server disconnected|peer closed connection",
    re.IGNORECASE,
)
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+Error:\s*|\w+Exception\s*-\s*)+")


def to_provider_error(exc: BaseException, *, api_key: str | None = None) -> ProviderError:
    """Classify ``exc``; the API key (and any key-shaped text) never reaches the detail."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, BadValue):  # a value the reader refused: already one line
        return ProviderError("bad_response", sanitize_detail(str(exc), api_key))
    chain = _chain(exc)
    ours = [e for e in chain if isinstance(e, ProviderError)]
    if ours:  # raised under an SDK (a body refused by our client's hooks) and wrapped by it
        return ours[0]
    names = {cls.__name__ for e in chain for cls in type(e).__mro__}
    # litellm stamps 500 on connection errors it wraps; that is no server's answer
    status = None if "APIConnectionError" in names else _status(chain)
    body_type, body_message = _body(chain)
    text = " ".join(filter(None, [body_message, *map(str, chain)]))
    kind = _kind(names, status, body_type, text)
    detail = sanitize_detail(body_message or _message(_unwrapped(exc)), api_key)
    retry_after = (
        parse_retry_after(_headers(chain)) if kind in ("rate_limit", "overloaded") else None
    )
    shown_status = (
        status if status and status >= 400 and kind not in ("timeout", "connection") else None
    )
    return ProviderError(kind, detail, status=shown_status, retry_after=retry_after)


def sanitize_detail(text: str, api_key: str | None = None) -> str:
    """One line, no secrets, no control sequences, at most ``DETAIL_LIMIT`` characters.
    Not even part of a key: a server may quote the start of the one it got."""
    keys = (api_key, *provider_keys_in_use()) if api_key else provider_keys_in_use()
    text = redact(redact_fragments(text, keys), keys)
    text = " ".join(strip_control(text).split())
    if len(text) > DETAIL_LIMIT:
        text = text[: DETAIL_LIMIT - 1] + "…"
    return text


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``retry-after`` as seconds or an HTTP date."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        if "retry-after-ms" in lower:
            return max(0.0, float(lower["retry-after-ms"]) / 1000)
        value = lower.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = parsedate_to_datetime(value).timestamp()
            return max(0.0, when - (time.time() if now is None else now))
    except (ValueError, TypeError, OverflowError):
        return None


def _kind(names: set[str], status: int | None, body_type: str | None, text: str) -> str:
    if status == 529 or "overloaded" in text.lower():
        return "overloaded"
    if body_type in _BODY_TYPES:
        return _BODY_TYPES[body_type]
    if "ContextWindowExceededError" in names or _CONTEXT_OVERFLOW.search(text):
        return "context_overflow"
    if "ContentPolicyViolationError" in names or _REFUSED.search(text):
        return "refused"
    if (
        status in (401, 403)
        or names & {"AuthenticationError", "PermissionDeniedError"}
        or _AUTH_TEXT.search(text)
    ):
        return "auth"
    if status == 429 or "RateLimitError" in names:
        return "rate_limit"
    if names & _TIMEOUT_CLASSES or _TIMEOUT_TEXT.search(text):
        return "timeout"
    if names & _CONNECTION_CLASSES or _CONNECTION_TEXT.search(text):
        return "connection"
    if status is not None and status >= 500:
        return "server"
    if status is not None and status >= 400:
        return "bad_request"
    return "bad_response"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: litellm's ``original_exception``, then causes and contexts.

    The SDKs wrap the informative error (the body of an error event, the
    socket error) a level or two down.
    """
    chain = [exc]
    while len(chain) < 8:
        last = chain[-1]
        inner = getattr(last, "original_exception", None)
        if not isinstance(inner, BaseException):
            inner = last.__cause__ or last.__context__
        if inner is None or any(inner is seen for seen in chain):
            break
        chain.append(inner)
    return chain


def _unwrapped(exc: BaseException) -> BaseException:
    """litellm's innermost ``original_exception``: its message has the provider's words."""
    for _ in range(8):
        inner = getattr(exc, "original_exception", None)
        if not isinstance(inner, BaseException):
            break
        exc = inner
    return exc


def _status(chain: list[BaseException]) -> int | None:
    for exc in chain:
        status = getattr(exc, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def _body(chain: list[BaseException]) -> tuple[str | None, str | None]:
    """The error ``type`` and ``message`` from the first Anthropic- or OpenAI-shaped body."""
    for exc in chain:
        body: Any = getattr(exc, "body", None)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            body = body["error"]
        if not isinstance(body, dict):
            continue
        kind = body.get("type") if isinstance(body.get("type"), str) else None
        code = body.get("code") if isinstance(body.get("code"), str) else None
        message = body.get("message") if isinstance(body.get("message"), str) else None
        return (code if code in _BODY_TYPES else kind), message
    return None, None


def _message(exc: BaseException) -> str:
    text = str(getattr(exc, "message", "") or exc) or type(exc).__name__
    return _LITELLM_PREFIX.sub("", text)


def _headers(chain: list[BaseException]) -> Mapping[str, str] | None:
    for exc in chain:
        headers = getattr(exc, "litellm_response_headers", None)
        if headers:
            return headers
        headers = getattr(getattr(exc, "response", None), "headers", None)
        if headers:
            return headers
    return None
