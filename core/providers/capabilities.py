"""Whether a model can take an attachment's kind, known before any request.

A configured endpoint's ``accepts`` list decides for its models; otherwise
litellm's model table (``supports_vision``, ``supports_audio_input``,
``supports_pdf_input``). A model neither knows is tried, and the server's
refusal reported like any other error.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.providers.cost import prices_for
from core.settings import Settings

_TABLE_FLAGS = {
    "image": "supports_vision",
    "audio": "supports_audio_input",
    "pdf": "supports_pdf_input",
}
_NAMES = {"image": "images", "audio": "audio", "pdf": "PDF documents"}


def refusal(model: str, kinds: Iterable[str], settings: Settings) -> str | None:
    """One line saying which kind ``model`` cannot take, or None when it may take them all."""
    wanted = list(dict.fromkeys(kinds))
    if not wanted:
        return None
    endpoint = settings.endpoint_for(model)
    if endpoint is not None and endpoint.accepts is not None:
        for kind in wanted:
            if kind not in endpoint.accepts:
                return (
                    f"{model} does not take {_NAMES[kind]} (endpoint {endpoint.name!r} "
                    f"accepts: {', '.join(endpoint.accepts) or 'text only'}); nothing was sent"
                )
        return None
    entry = prices_for(model)
    if entry is None:
        return None
    for kind in wanted:
        if not entry.get(_TABLE_FLAGS[kind]):
            return (
                f"{model} does not take {_NAMES[kind]} (litellm's model table); "
                "choose a model that does with -m; nothing was sent"
            )
    return None
