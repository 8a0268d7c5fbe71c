"""Time-ordered identifiers (UUIDv7, RFC 9562) and timestamps."""

from __future__ import annotations

import os
import threading
import time
import uuid
from datetime import UTC, datetime

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def uuid7() -> str:
    """A UUIDv7 string; strictly increasing within this process."""
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            ms = _last_ms
            _counter += 1
            if _counter >= 1 << 12:
                ms += 1
                _counter = 0
        else:
            _counter = 0
        _last_ms = ms
        rand_a = _counter
    rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return str(uuid.UUID(int=value))


SHORT_ID_LENGTH = 8
"""Hex digits of an id's short form: the end of its 62 random bits, so two ids
made the same millisecond differ there (their starts are the time)."""


def short_id(full: str) -> str:
    """The id as people type it: its last :data:`SHORT_ID_LENGTH` characters."""
    return full[-SHORT_ID_LENGTH:]


def now_iso() -> str:
    """UTC timestamp with microseconds; sorts lexicographically."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
