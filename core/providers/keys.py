"""Which environment variables hold a provider's key.

:class:`core.providers.target.Target` names the one a request sends, and says
before anything is written when it is missing.
"""

from __future__ import annotations

import os

PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "cohere_chat": ("COHERE_API_KEY",),
}
"""litellm provider -> the environment variables that hold its key."""


def keyed_providers() -> set[str]:
    return {p for p, names in PROVIDER_KEYS.items() if any(os.environ.get(n) for n in names)}


def provider_keys_in_use() -> tuple[str, ...]:
    """The values of every provider key variable that is set: the keys an SDK
    may send whichever model is asked."""
    values = (os.environ.get(name) for names in PROVIDER_KEYS.values() for name in names)
    return tuple(value for value in values if value)
