"""A model's window learned from its endpoint, asked once and remembered.

Only for a model neither the ``context_windows`` setting nor litellm's table
knows, served by something that may be local (:func:`server_root`). What the
server said (or that nothing answered) is saved in the database with the time,
and asked again only after :data:`REMEMBERED_FOR`: a server restarted with
another context size is noticed within a day. A server that refused a request
as too long (and says its window nowhere, as llama-cpp-python's) has a window
smaller than that request: :func:`window_at_most` remembers that too.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from core.chat.target import savable_base_url
from core.providers.endpoint_window import ask_window, served_name, server_root
from core.providers.slots import slot, slots_for
from core.providers.target import Target
from core.sessions.ids import now_iso
from core.sessions.persistence import LearnedWindow, SessionStore
from core.settings import Settings
from core.tokens import context_window, known_context_window

REMEMBERED_FOR = timedelta(days=1)


def _fresh(learned: LearnedWindow, now: datetime) -> bool:
    try:
        then = datetime.fromisoformat(learned.learned_at)
    except ValueError:
        return False
    return now - then < REMEMBERED_FOR


async def learn_window(
    store: SessionStore, model: str, settings: Settings, target: Target
) -> LearnedWindow | None:
    """What ``model``'s endpoint (``target``'s, the conversation's) says its
    window is (``tokens`` 0: nothing answered); None when the window is known
    already or nothing can be asked."""
    known = await asyncio.to_thread(known_context_window, model, settings.context_windows)
    if known is not None:
        return None
    root = server_root(target)
    endpoint = savable_base_url(root)
    if root is None or endpoint is None:
        return None
    saved = await store.learned_window(endpoint, model)
    if saved is not None and _fresh(saved, datetime.fromisoformat(now_iso())):
        return saved
    from core.providers.registry import warm_up  # the providers: not at launch

    # the request this is asked for needs its SDK prepared, not just imported
    warm_up(target.model, target.api_base)
    async with slot(slots_for(target, settings)):  # not beside a running reply
        found = await ask_window(root, served_name(target.model))
    tokens, source = found if found is not None else (0, "none")
    learned = LearnedWindow(endpoint, model, tokens, source, now_iso())
    await store.save_learned_window(learned)
    return learned


async def window_at_most(
    store: SessionStore, model: str, settings: Settings, target: Target, refused: int
) -> LearnedWindow | None:
    """The model's server (``target``'s) refused a request of ``refused`` tokens as too long:
    its window is smaller. When the window was a guess (the server says it
    nowhere), the server is asked to name it in a refusal
    (:mod:`core.providers.window_probe`, source ``refusal``); else, or if it
    does not, ``refused`` is taken (source ``overflow``). Remembered when that
    is less than the window assumed so far; None otherwise."""
    from core.providers.window_probe import ask_by_refusal

    if refused >= await asyncio.to_thread(context_window, model, settings.context_windows):
        return None
    endpoint = savable_base_url(server_root(target)) or ""
    guessed = known_context_window(model, settings.context_windows) is None
    slots = slots_for(target, settings)
    named = await ask_by_refusal(target, refused, slots) if guessed else None
    tokens, source = (named, "refusal") if named is not None else (refused, "overflow")
    learned = LearnedWindow(endpoint, model, tokens, source, now_iso())
    if endpoint:
        await store.save_learned_window(learned)
    return learned
