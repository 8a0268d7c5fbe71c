"""How big a model's context is, and how much of it a path uses.

``context_window(model)`` reads the model's entry in litellm's bundled model
table (the file :mod:`core.providers.cost` prices with), found in the file's
text without parsing the whole table or importing litellm: cheap enough for
the first frame.
``context_tokens(path, model)`` takes what the provider reported for what it
has already seen (the usage of the last complete assistant message on the
path) and counts only what is new since, with litellm's token counter.
litellm is imported only when something has to be counted, never at start;
if it cannot count, the ~4-characters-a-token estimate is used instead.

The first exact count imports litellm (seconds): a UI calls this from a
worker thread, or passes ``exact=False`` for the cheap estimate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from core.providers.keys import PROVIDER_KEYS
from core.providers.model_entry import model_entry
from core.sessions.content import (
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCallContent,
    ToolResultContent,
)
from core.sessions.context import build_context, estimate_tokens, latest_compaction
from core.sessions.entries import BranchSummary, Entry
from core.sessions.messages import Message, Usage

DEFAULT_CONTEXT_WINDOW = 8_192
"""A conservative guess for a model nothing describes (a local model without a
``context_windows`` entry): compaction then starts early rather than never,
before the server fails (or, like Ollama, silently cuts the prompt)."""
HOSTED_CONTEXT_WINDOW = 128_000
"""The guess for a hosted provider's model litellm's table does not know yet
(a new release): those windows are large, and starting to compact at 8k would
throw away most of the conversation for nothing."""
_HOSTED_ONLY = frozenset(PROVIDER_KEYS) - {"openai"}
"""Providers that only serve their own models (``openai/`` also names any
OpenAI-compatible server, local ones included)."""
DEMO_CONTEXT_WINDOW = 32_768
IMAGE_TOKENS = 1_000
"""An image whose size is unknown."""
_IMAGE_MAX_EDGE = 1568
"""Providers scale larger images down to about this long edge before counting."""
_UNUSABLE_STOPS = ("aborted", "error")
_MESSAGE_OVERHEAD = 4
"""Role and separators, per message."""


def _is_demo(model: str) -> bool:
    return model == "demo" or model.startswith("demo/")


def context_window(model: str, overrides: Mapping[str, int] | None = None) -> int:
    """Input tokens ``model`` accepts: ``overrides`` (the ``context_windows``
    setting) first, then litellm's table; 32k for the demo; when unknown, a
    guess (:func:`guessed_context_window`)."""
    return known_context_window(model, overrides) or guessed_context_window(model)


def guessed_context_window(model: str) -> int:
    """The window assumed when nothing says it: large for a hosted provider's
    new model, :data:`DEFAULT_CONTEXT_WINDOW` for anything that may be local."""
    provider = model.split("/", 1)[0] if "/" in model else ""
    return HOSTED_CONTEXT_WINDOW if provider in _HOSTED_ONLY else DEFAULT_CONTEXT_WINDOW


def configured_context_window(model: str, overrides: Mapping[str, int] | None = None) -> int | None:
    """The window the ``context_windows`` setting or the demo gives: known
    without reading litellm's table (which is large)."""
    if overrides and model in overrides:
        return int(overrides[model])
    if _is_demo(model):
        return DEMO_CONTEXT_WINDOW
    return None


def known_context_window(model: str, overrides: Mapping[str, int] | None = None) -> int | None:
    """:func:`context_window` when something says it; None when it would be a guess."""
    configured = configured_context_window(model, overrides)
    if configured is not None:
        return configured
    info = model_info(model)
    if info is not None:
        window = info.get("max_input_tokens") or info.get("max_tokens")
        if isinstance(window, int) and window > 0:
            return window
    return None


def max_output_tokens(model: str) -> int | None:
    """The most tokens ``model`` may write in one reply, when litellm's table knows."""
    info = model_info(model)
    if info is None:
        return None
    value = info.get("max_output_tokens") or info.get("max_tokens")
    return value if isinstance(value, int) and value > 0 else None


def model_info(model: str) -> Mapping[str, Any] | None:
    """The table entry for ``model``: tried as given, then without its provider
    prefix. Only that entry is parsed (:mod:`core.providers.model_entry`)."""
    if "/" in model:
        return model_entry(model, model.split("/", 1)[1])
    return model_entry(model)


def image_tokens(image: ImageContent) -> int:
    """About what a provider charges for an image: by its size (width x height /
    750 after scaling the long edge down to ~1568 px), 1,000 when the size is unknown."""
    width, height = image.width, image.height
    if width <= 0 or height <= 0:
        return IMAGE_TOKENS
    scale = min(1.0, _IMAGE_MAX_EDGE / max(width, height))
    return max(85, math.ceil(width * scale * height * scale / 750))


# --- counting ---------------------------------------------------------------


@dataclass(frozen=True)
class UsageSplit:
    """What a path's context is made of, for counting."""

    reported: int
    """Tokens the provider reported for the last complete reply (prompt + reply); 0 if none."""
    new: tuple[Message, ...]
    """Messages sent since that reply (all visible messages when there is none)."""
    system: str | None
    """The system prompt when it is not covered by ``reported``."""


def split_usage(path: Sequence[Entry], model: str) -> UsageSplit:
    """Pure. Only replies after the latest compaction count: one before it
    reported a context that no longer exists."""
    found = latest_compaction(path)
    floor = found[0] + 1 if found is not None else 0
    for index in range(len(path) - 1, floor - 1, -1):
        message = path[index].message
        if (
            message is not None
            and message.role == "assistant"
            and _reported(message.usage)
            and message.stop_reason not in _UNUSABLE_STOPS
        ):
            return UsageSplit(message.usage.total_tokens, _sent_messages(path[index + 1 :]), None)
    context = build_context(path, model)
    return UsageSplit(0, context.messages, context.system)


def usage_unreported(path: Sequence[Entry]) -> bool:
    """Pure. The path holds replies since its latest compaction and not one
    says its usage (a server that counts nothing, as llama-cpp-python's): its
    context figure is all a local estimate (:func:`context_tokens`)."""
    found = latest_compaction(path)
    floor = found[0] + 1 if found is not None else 0
    replied = False
    for entry in reversed(path[floor:]):
        message = entry.message
        if message is None or message.role != "assistant":
            continue
        if _reported(message.usage):
            return False
        replied = True
    return replied


def _reported(usage: Usage | None) -> TypeGuard[Usage]:
    """The server counted: an estimate made here is no report."""
    return usage is not None and usage.total_tokens > 0 and not usage.estimated


def estimated_usage(sent: Sequence[Message], overhead: int, reply: Message) -> Usage:
    """Pure. What a request and its reply would have counted, estimated as the
    safety net estimates (~4 characters a token): for a server that says no
    usage, so the totals are not zero. ``overhead``: the system prompt and tools."""
    return Usage(
        input_tokens=sum(estimate_tokens(m) for m in sent) + overhead,
        output_tokens=estimate_tokens(reply),
        estimated=True,
    )


def _sent_messages(entries: Sequence[Entry]) -> tuple[Message, ...]:
    out: list[Message] = []
    for entry in entries:
        payload = entry.payload
        if isinstance(payload, Message) and payload.role in ("user", "assistant", "tool_result"):
            out.append(payload)
        elif isinstance(payload, BranchSummary):
            out.append(Message(role="user", content=(TextContent(payload.summary),)))
    return tuple(out)


def context_tokens(source: Any, model: str, *, exact: bool = True) -> int:
    """Tokens the next request for ``source`` (a Session or a path of entries)
    will use: the provider's reported usage plus a count of what is new since.

    ``exact=False`` estimates the new part (~4 characters a token) and never imports litellm.
    """
    path: Sequence[Entry] = getattr(source, "path", source)
    split = split_usage(path, model)
    return split.reported + count_tokens(split.new, model, system=split.system, exact=exact)


def count_tokens(
    messages: Sequence[Message], model: str, *, system: str | None = None, exact: bool = True
) -> int:
    """Tokens of ``messages`` (and ``system``): text by litellm's counter for
    ``model`` when ``exact``, images by size. Falls back to the estimate."""
    if not messages and not system:
        return 0
    images = sum(image_tokens(image) for message in messages for image in message.images)
    if exact and not _is_demo(model):
        counted = _litellm_count(messages, model, system)
        if counted is not None:
            return counted + images
    estimate = sum(estimate_tokens(m) for m in messages) + (len(system) // 4 + 4 if system else 0)
    # estimate_tokens counts images as 1,000 each: count them by size instead.
    flat = sum(IMAGE_TOKENS for message in messages for _ in message.images)
    return estimate - flat + images


def upper_bound_tokens(path: Sequence[Entry], model: str) -> int:
    """Pure, cheap: at most this many tokens (no tokenizer makes more tokens
    than characters). Lets callers skip an exact count when far from a limit."""
    split = split_usage(path, model)
    chars = sum(len(message_text(m)) + _MESSAGE_OVERHEAD for m in split.new)
    images = sum(image_tokens(image) for m in split.new for image in m.images)
    return split.reported + chars + images + len(split.system or "")


def message_text(message: Message) -> str:
    """Everything in a message that costs tokens, as text (images left out)."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent):
            parts.append(block.text)
        elif isinstance(block, ToolCallContent):
            parts.append(f"{block.name}({block.raw_arguments})")
        elif isinstance(block, ToolResultContent):
            parts.append(block.text)
    return "\n".join(parts)


def _litellm_count(messages: Sequence[Message], model: str, system: str | None) -> int | None:
    wire = [{"role": "system", "content": system}] if system else []
    wire += [
        {"role": "assistant" if m.role == "assistant" else "user", "content": message_text(m)}
        for m in messages
    ]
    try:
        from core.providers import sdk

        return int(sdk.litellm().token_counter(model=model, messages=wire))
    except Exception:  # litellm missing, an unknown tokenizer, anything: estimate instead
        return None
