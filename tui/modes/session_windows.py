"""The window each model of a session has, and where that figure came from,
for ``tangents sessions show``: the settings, what its server said (learned,
remembered in the database), litellm's table, or a guess."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from core.chat.target import savable_base_url, target_for
from core.providers.endpoint_window import server_root
from core.sessions.persistence import SessionStore
from core.settings import Settings
from core.tokens import context_window, known_context_window


@dataclass(frozen=True)
class ModelWindow:
    model: str
    tokens: int
    source: str
    """``settings``, what the server said (``refusal``, ``vllm``, ...), ``table`` or ``guess``."""
    learned_at: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "tokens": self.tokens, "source": self.source}

    def line(self) -> str:
        where = {"settings": "the settings", "table": "litellm's table", "guess": "a guess"}
        said = where.get(self.source) or f"learned: {self.source}, {self.learned_at[:10]}"
        return f"  window   {self.model}: {self.tokens:,} tokens ({said})\n"


async def model_windows(
    store: SessionStore, models: Sequence[str], endpoint: str | None, settings: Settings
) -> list[ModelWindow]:
    """The window of each of ``models``, served at ``endpoint`` (the session's last)."""
    found = []
    for model in models:
        if model in settings.context_windows:
            found.append(ModelWindow(model, settings.context_windows[model], "settings"))
            continue
        root = savable_base_url(server_root(target_for(model, settings, endpoint)))
        learned = await store.learned_window(root, model) if root else None
        if learned is not None and learned.tokens:
            found.append(ModelWindow(model, learned.tokens, learned.source, learned.learned_at))
            continue
        known = await asyncio.to_thread(known_context_window, model)
        if known is not None:
            found.append(ModelWindow(model, known, "table"))
        else:
            found.append(
                ModelWindow(model, await asyncio.to_thread(context_window, model), "guess")
            )
    return found
