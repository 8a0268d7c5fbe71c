"""Which environment variable holds a provider's key, and whether a model has one.

Checked before anything is written, so a missing key is one line ("no API key
for openai: set OPENAI_API_KEY") instead of a failed request and a session
holding only the question.
"""

from __future__ import annotations

import os

from core.settings import Settings

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


def missing_key(model: str, settings: Settings, api_base: str | None) -> str | None:
    """Why ``model`` cannot be asked for lack of a key, or None.

    A custom endpoint needs the variable its ``api_key_env`` names (if any);
    a model sent to an explicit base URL (a local server) needs none; a
    provider from the table needs one of its variables. Providers not in the
    table are left for the request to judge."""
    endpoint = settings.endpoint_for(model)
    if endpoint is not None:
        name = endpoint.api_key_env
        if name and not os.environ.get(name):
            return f"no API key for {endpoint.name}: set {name}"
        return None
    if api_base:
        return None
    provider = model.split("/", 1)[0] if "/" in model else ""
    names = PROVIDER_KEYS.get(provider)
    if names and not any(os.environ.get(name) for name in names):
        return f"no API key for {provider}: set {names[0]}"
    return None
