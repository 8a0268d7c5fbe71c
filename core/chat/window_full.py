"""Words for a reply the model's context window stopped.

A server that is asked for no output limit and still stops a reply with
``length`` ran out of window (llama-cpp-python's does when prompt and answer
outgrow ``n_ctx``): that is not the output token limit, and retrying the same
context cannot help. The reply keeps its ``length`` stop and gets an error
saying which window filled and what can help.
"""

from __future__ import annotations

from core.sessions.messages import Message

FULL_KIND = "context_full"
"""The ``error_kind`` of a reply the window stopped."""


def window_label(window: int, guessed: bool) -> str:
    """``4k`` for 4,096, ``8.2k?`` for a guessed 8,192 (as the footer writes it)."""
    if window % 1024 == 0:
        label = f"{window // 1024}k"
    else:
        label = f"{window / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    return label + ("?" if guessed else "")


def stopped_by_window(message: Message, asked_limit: int | None, provider: str) -> bool:
    """A ``length`` stop with no output limit asked for (Anthropic's API always
    sets one, so there it is the output limit)."""
    return message.stop_reason == "length" and asked_limit is None and provider != "anthropic"


def window_full(message: Message, window: int, guessed: bool) -> Message:
    """``message`` with the error that says its window filled."""
    why = (
        f"the model's context window ({window_label(window, guessed)}) is full: "
        "compact the conversation (/compact) or shorten the message"
    )
    return message.with_(error=why, meta={**message.meta, "error_kind": FULL_KIND})
