"""Attachments a model's server refused: said once, then left out as a note.

A text-only model on a local server fails on every request that carries an
image (llama-cpp-python's chat handler: HTTP 500, "can only concatenate str
(not "list") to str"), so sending the image again on each later message
would fail each of them the same way. A refusal of a request that carried
an image, before any reply, is taken for a refusal of images: the reply's
error says so in one line, its ``meta`` records the kind, and later requests
for that model send the image as its one-line placeholder
(``[image omitted: ...]``). The image stays in the session for another model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.providers.base import ProviderError
from core.sessions.entries import Entry

META_KEY = "refused_kind"
"""Where a failed reply records the kind its request was refused for."""
_NAMES = {"image": "images"}


def refused_kind(
    error: ProviderError | None, started: bool, image_shas: tuple[str, ...]
) -> str | None:
    """The kind of attachment a failed request was refused for: ``image`` when
    it carried images and the server refused it (400) or failed on it (500)
    before a word; None otherwise (a reply that began, a rate limit, ...)."""
    if error is None or started or not image_shas:
        return None
    if error.kind == "bad_request" or (error.kind == "server" and error.status == 500):
        return "image"
    return None


def refusal_error(error: ProviderError, model: str, kind: str) -> ProviderError:
    """``error`` in words naming the kind and what happens next, one line."""
    return ProviderError(
        "bad_request",
        f"{model} refused the {kind} it was sent ({error.message}); later requests "
        f"send {_NAMES[kind]} as a note: choose a model that takes {_NAMES[kind]} to send them",
        status=error.status,
    )


def refused_on(entries: Iterable[Entry]) -> dict[str, tuple[str, ...]]:
    """Model -> kinds its replies among ``entries`` recorded as refused."""
    found: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        message = entry.message
        kind = message.meta.get(META_KEY) if message is not None else None
        if isinstance(kind, str) and message is not None and message.model:
            kinds = found.get(message.model, ())
            found[message.model] = kinds if kind in kinds else (*kinds, kind)
    return found


def merged(
    known: Mapping[str, tuple[str, ...]], more: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[str, ...]]:
    """``known`` with the kinds of ``more`` added."""
    out = dict(known)
    for model, kinds in more.items():
        out[model] = tuple(dict.fromkeys((*out.get(model, ()), *kinds)))
    return out
