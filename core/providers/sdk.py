"""Lazy, quiet imports of the provider SDKs.

The SDKs take seconds to import, so nothing imports them before the first
request that needs one. litellm is set up before its import so that it never
fetches its price map from the network, and silenced after it: it prints
help banners and logs to stderr, which would corrupt a full-screen terminal UI.
"""

from __future__ import annotations

import logging
import os
from functools import cache
from types import ModuleType

_LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")


@cache
def litellm() -> ModuleType:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as module

    module.suppress_debug_info = True
    module.disable_hf_tokenizer_download = True  # token counting must not reach the network
    for name in _LITELLM_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return module


@cache
def anthropic() -> ModuleType:
    import anthropic as module

    return module
