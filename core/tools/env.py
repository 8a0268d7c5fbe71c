"""The environment tools and MCP servers run with: ours, minus every key.

A variable is hidden from ``run_command`` and from MCP servers when

* an endpoint names it in ``api_key_env``;
* litellm reads it as a provider credential (the names litellm's own
  ``validate_environment`` checks, read from its source text, so litellm is
  not imported for this);
* one of the words of its name (split at ``_`` and digits) is ``KEY``,
  ``TOKEN``, ``PASS``, ``AUTH``, ``CREDENTIALS`` or the like, or it contains
  ``SECRET``, ``PASSWORD``, ``PASSWD``, ``PASSPHRASE``, ``CREDENTIAL`` or
  ``APIKEY`` (``GITHUB_TOKEN``, ``OPENAI_API_KEY_2``, ``AWS_SECRET_ACCESS_KEY``,
  ``PGPASSWORD``, ``SSH_AUTH_SOCK``...; not ``KEYBOARD`` or ``TOKENIZERS_PARALLELISM``);
* its value holds a URL with a credential: a password or a long user name
  before the host (``postgres://u:PASS@host``, ``https://TOKEN@host``) or a
  key-like query parameter (``?token=...``),

unless the user allows it by name in ``[tools] env_passthrough`` (or, for one
MCP server, in that server's ``env_passthrough``). Values a server's config
gives in ``env = {...}`` are explicit and always passed.

:func:`EnvPolicy.secret_values` lists what was hidden, for redacting text that
may quote it (a server's stderr).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from core.sanitize import redact

if TYPE_CHECKING:
    from core.settings import Settings

_SECRET_WORDS = frozenset(
    {"KEY", "KEYS", "TOKEN", "TOKENS", "PASS", "PW", "AUTH", "CREDS", "CREDENTIALS", "PAT"}
)
_SECRET_PARTS = re.compile(r"SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|APIKEY")
_WORD_BREAK = re.compile(r"[^A-Z]+")
_CREDENTIAL_URL = re.compile(
    r"[a-z][a-z0-9+.\-]*://(?:[^\s/@:]*:[^\s/@]+|[^\s/@:]{16,})@"
    r"|[?&](?:[a-z_\-]*(?:key|token|secret|password|sig|signature|auth))=[^&\s]",
    re.IGNORECASE,
)
_CREDENTIAL_HINT = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL")
_QUOTED_NAME = re.compile(r'"([A-Z][A-Z0-9_]{2,})"')


def looks_secret(name: str) -> bool:
    """Whether a variable's name says it holds a credential."""
    upper = name.upper()
    return bool(_SECRET_PARTS.search(upper)) or not _SECRET_WORDS.isdisjoint(
        _WORD_BREAK.split(upper)
    )


def carries_credential(value: str) -> bool:
    """Whether a variable's value holds a URL with a credential in it."""
    return bool(_CREDENTIAL_URL.search(value))


@lru_cache(maxsize=1)
def litellm_key_names() -> frozenset[str]:
    """Credential variables litellm checks for its providers (``validate_environment``
    in litellm/utils.py), found without importing litellm; empty if it is absent."""
    from importlib.util import find_spec

    try:
        spec = find_spec("litellm")
    except (ImportError, ValueError):
        return frozenset()
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    for location in spec.submodule_search_locations:
        try:
            with open(os.path.join(location, "utils.py"), encoding="utf-8") as handle:
                source = handle.read()
        except OSError:
            continue
        start = source.find("def validate_environment(")
        if start < 0:
            continue
        end = source.find("\ndef ", start + 1)
        body = source[start : end if end > 0 else len(source)]
        return frozenset(n for n in _QUOTED_NAME.findall(body) if _CREDENTIAL_HINT.search(n))
    return frozenset()


@dataclass(frozen=True)
class EnvPolicy:
    """Which of our variables a tool or server may see."""

    hidden: frozenset[str] = frozenset()
    """Names hidden whatever they look like (the endpoints' ``api_key_env``)."""
    passthrough: frozenset[str] = frozenset()
    """Names the user allowed (``[tools] env_passthrough``)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> EnvPolicy:
        hidden = {e.api_key_env for e in settings.endpoints if e.api_key_env}
        return cls(frozenset(hidden), frozenset(settings.tools.env_passthrough))

    def hides(self, name: str, value: str = "", allowed: Iterable[str] = ()) -> bool:
        if name in self.passthrough or name in allowed:
            return False
        return (
            name in self.hidden
            or looks_secret(name)
            or name in litellm_key_names()
            or carries_credential(value)
        )

    def environment(
        self, base: Mapping[str, str] | None = None, *, allowed: Iterable[str] = ()
    ) -> dict[str, str]:
        """``base`` (default: ours) without the hidden variables; ``allowed``
        names more variables to pass (one MCP server's ``env_passthrough``)."""
        base = os.environ if base is None else base
        allowed = frozenset(allowed)
        return {k: v for k, v in base.items() if not self.hides(k, v, allowed)}

    def secret_values(self, extra: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """Values of our hidden variables, and of ``extra`` entries whose names look
        secret (a server's ``env``), for :func:`redact`."""
        values = [v for k, v in os.environ.items() if self.hides(k, v)]
        if extra:
            values += [v for k, v in extra.items() if self.hides(k, v)]
        return tuple(v for v in values if v)

    def redact(self, text: str, extra: Mapping[str, str] | None = None) -> str:
        """``text`` with every hidden value and key-shaped string replaced."""
        return redact(text, self.secret_values(extra))
