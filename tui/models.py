"""What the app knows about models: which ones can be used, their context
window, and whether any API key is set at all.

The model table is litellm's bundled price map (``core.providers.cost``), read
as JSON without importing litellm. Reading it costs ~30 ms, so it is only done
in a thread worker after the first frame.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from core.settings import Settings

DEMO = "demo"

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


def has_any_key() -> bool:
    return bool(keyed_providers())


def model_label(model: str) -> str:
    return "demo (offline)" if model == DEMO else model


def _table() -> Mapping[str, object]:
    from core.providers.cost import price_table

    return price_table()


def catalog_models(table: Mapping[str, object], providers: set[str]) -> list[str]:
    """Chat models of ``providers`` from litellm's table, in ``provider/model`` form."""
    names: set[str] = set()
    for key, info in table.items():
        if not isinstance(info, dict) or info.get("mode") != "chat":
            continue
        provider = info.get("litellm_provider")
        if provider not in providers or key.startswith("ft:"):
            continue
        names.add(key if key.startswith(f"{provider}/") else f"{provider}/{key}")
    return sorted(names)


def known_models(settings: Settings, current: Iterable[str] = ()) -> list[str]:
    """Everything the picker offers: models of providers with a key, configured
    endpoints' models, the ones in use, and the demo. Blocking: run in a thread."""
    models = catalog_models(_table(), keyed_providers())
    for endpoint in settings.endpoints:
        models.extend(f"{endpoint.name}/{m}" if "/" not in m else m for m in endpoint.models)
    extra = [m for m in current if m]
    return list(dict.fromkeys([*extra, *sorted(set(models) - set(extra)), DEMO]))
