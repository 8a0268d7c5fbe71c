"""Attachments a model's server refused: said once, then left out as a note.

A text-only model on a local server fails on every request that carries an
attachment (llama-cpp-python: HTTP 500, its chat handler's Python error for
an image, its request validation's for audio or a file part; llama.cpp's
``llama-server``: HTTP 500 "audio input is not supported", HTTP 400
"unsupported content[].type"), so sending it again on each later message
would fail each of them the same way. A refusal (400 or 500) of a request
that carried attachments, before any reply, is taken for a refusal of their
kinds: those the server's words name, or, when it names none, every kind the
request carried. The reply's error says so in one line, its ``meta`` records
the kinds, and later requests for that model send those attachments as their
one-line placeholders (``[image omitted: ...]``, ``[file omitted: ...]``).
The attachments stay in the session for another model.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from core.providers.base import ProviderError
from core.sessions.content import FileContent, ImageContent
from core.sessions.context import Context
from core.sessions.entries import Entry
from core.sessions.sniff import kind_of

META_KEY = "refused_kind"
"""Where a failed reply records the kind (or, a list, the kinds) its request
was refused for."""
_NAMES = {"image": "images", "audio": "audio", "pdf": "PDF documents"}
_ONE = {"image": "image", "audio": "audio", "pdf": "PDF"}
_NAMED = {
    "image": re.compile(r"image", re.IGNORECASE),
    "audio": re.compile(r"audio", re.IGNORECASE),
    "pdf": re.compile(r"\bfile\b|pdf|document", re.IGNORECASE),
}
"""How a server's words name a kind (``image_url``, ``input_audio``, a ``file`` part)."""


def sent_kinds(context: Context) -> tuple[str, ...]:
    """The kinds of attachment a request built from ``context`` carries as data."""
    kinds: dict[str, None] = {}
    for message in context.messages:
        for block in message.content:
            if isinstance(block, ImageContent):
                kinds["image"] = None
            elif isinstance(block, FileContent):
                kinds[kind_of(block.media_type)] = None
    return tuple(kinds)


def refused_kinds(
    error: ProviderError | None, started: bool, carried: Collection[str]
) -> tuple[str, ...]:
    """The kinds of attachment a failed request was refused for: of those it
    ``carried``, the ones the server's words name, else all of them, when the
    server refused it (400) or failed on it (500) before a word; none
    otherwise (a reply that began, a rate limit, ...)."""
    if error is None or started or not carried:
        return ()
    if not (error.kind == "bad_request" or (error.kind == "server" and error.status == 500)):
        return ()
    named = tuple(kind for kind in carried if kind in _NAMED and _NAMED[kind].search(error.detail))
    return named or tuple(carried)


def refusal_error(error: ProviderError, model: str, kinds: Collection[str]) -> ProviderError:
    """``error`` in words naming the kinds and what happens next, one line."""
    one = " and ".join(_ONE.get(kind, kind) for kind in kinds)
    many = " and ".join(_NAMES.get(kind, kind) for kind in kinds)
    return ProviderError(
        "bad_request",
        f"{model} refused the {one} it was sent ({error.message}); later requests "
        f"send {many} as a note: choose a model that takes {many} to send them",
        status=error.status,
    )


def recorded(kinds: Collection[str]) -> str | list[str]:
    """What :data:`META_KEY` holds: one kind as it is, several as a list."""
    return next(iter(kinds)) if len(kinds) == 1 else list(kinds)


def refused_on(entries: Iterable[Entry]) -> dict[str, tuple[str, ...]]:
    """Model -> kinds its replies among ``entries`` recorded as refused."""
    found: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        message = entry.message
        if message is None or not message.model:
            continue
        value = message.meta.get(META_KEY)
        kinds = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        for kind in kinds:
            if isinstance(kind, str) and kind not in found.get(message.model, ()):
                found[message.model] = (*found.get(message.model, ()), kind)
    return found


def merged(
    known: Mapping[str, tuple[str, ...]], more: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """``known`` with the kinds of ``more`` added."""
    out = dict(known)
    for model, kinds in more.items():
        out[model] = tuple(dict.fromkeys((*out.get(model, ()), *kinds)))
    return out
