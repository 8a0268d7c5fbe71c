"""This machine's device id: made on first use and kept in the data dir's
state, so its journals in the sync folder keep one name."""

from __future__ import annotations

import re
import secrets
import socket

from core.settings import read_state, write_state

_STATE_KEY = "sync_device"
_VALID = re.compile(r"[a-z0-9][a-z0-9-]{0,40}")


def device_id() -> str:
    known = read_state().get(_STATE_KEY)
    if isinstance(known, str) and _VALID.fullmatch(known):
        return known
    host = re.sub(r"[^a-z0-9]+", "-", socket.gethostname().lower()).strip("-")[:24]
    made = f"{host or 'device'}-{secrets.token_hex(3)}"
    write_state(**{_STATE_KEY: made})
    return made
