"""What the app knows about models: which ones can be used, their context
window, and whether any API key is set at all.

The model table is litellm's bundled price map (``core.providers.cost``), read
as JSON without importing litellm. Reading it is slow enough to hold a frame,
so it is only done in a thread worker after the first frame.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from core.providers.keys import keyed_providers
from core.settings import Settings

if TYPE_CHECKING:
    from core.providers.target import Target

DEMO = "demo"


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


def servers_to_ask(model: str, settings: Settings, target: Target) -> dict[str, str]:
    """``{server root: prefix}``: the servers whose own model lists the picker
    shows (the current model's server, ``target``'s, when it is one that may
    be local, and every ``[[endpoints]]`` entry), with the prefix their models take."""
    from core.providers.endpoint_window import server_root

    servers: dict[str, str] = {}
    root = server_root(target)
    if root is not None:
        endpoint = settings.endpoint_for(model)
        servers[root] = endpoint.name if endpoint else model.split("/", 1)[0]
    for endpoint in settings.endpoints:
        base = endpoint.base_url.rstrip("/")
        servers.setdefault(base[: -len("/v1")] if base.endswith("/v1") else base, endpoint.name)
    return servers


def known_models(settings: Settings, current: Iterable[str] = ()) -> list[str]:
    """Everything the picker offers: models of providers with a key, configured
    endpoints' models, the ones in use, and the demo. Blocking: run in a thread."""
    models = catalog_models(_table(), keyed_providers())
    for endpoint in settings.endpoints:
        models.extend(f"{endpoint.name}/{m}" if "/" not in m else m for m in endpoint.models)
    extra = [m for m in current if m]
    return list(dict.fromkeys([*extra, *sorted(set(models) - set(extra)), DEMO]))
