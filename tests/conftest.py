"""Shared fixtures: every test runs with its own home, data and config
directories and without any provider key or endpoint from the developer's
environment."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tui.internals import gc_policy as _gc
from tui.internals.textual_private import patch_textual, patches_wanted

# Property tests have no per-example deadline: these machines are shared, and a
# deadline is a timing assertion (an example slowed by the neighbours fails).
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")

# ``import fake_provider`` works from any test directory, whatever the import
# mode. After the project's packages are imported: ``tests/core`` is a folder
# of tests, not the ``core`` package.
sys.path.insert(0, str(Path(__file__).parent))

from fake_provider import FakeProvider  # noqa: E402

# As the app does before its first screen: tests of its screens and widgets lay
# out and paint as it does, whichever test comes first in a process
# (TANGENTS_TEXTUAL_PATCHES=0: as Textual does unpatched; .ci/run runs both).
PATCHED = patch_textual(patches_wanted())
_gc.take_charge(bool(PATCHED))

_APP_DIRS = ("tui", "branching", "e2e")
"""Test folders that drive the app: marked ``app``, so ``-m "not slow and not app"``
is the quick inner loop (the domain, storage, providers, formats, tools)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).parent
    for item in items:
        folder = item.path.relative_to(tests).parts[0]
        if folder in _APP_DIRS:
            item.add_marker(pytest.mark.app)
    if not PATCHED:
        # What a speed patch itself does cannot be seen without it: deselected
        # (and counted as such), the rest runs on Textual as shipped.
        unpatched = [item for item in items if item.get_closest_marker("patched")]
        if unpatched:
            config.hook.pytest_deselected(items=unpatched)
            items[:] = [item for item in items if not item.get_closest_marker("patched")]


# Provider settings that must never leak in from the developer's shell.
_PROVIDER_ENV = (
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OPENAI_ORGANIZATION",
    "AZURE_API_BASE",
    "OLLAMA_API_BASE",
    "OPENROUTER_API_BASE",
    "LITELLM_LOG",
    "LITELLM_PROXY_API_BASE",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point TANGENTS_HOME, XDG dirs and HOME into ``tmp_path``; drop every key."""
    home = tmp_path / "home"
    for name, sub in (
        ("HOME", "home"),
        ("TANGENTS_HOME", "tangents"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ):
        path = tmp_path / sub
        path.mkdir(exist_ok=True)
        monkeypatch.setenv(name, str(path))
    for name in list(os.environ):
        upper = name.upper()
        if upper.endswith(("_API_KEY", "_API_TOKEN", "_SECRET_KEY")) or upper in _PROVIDER_ENV:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return home


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    """A started fake provider server: ``.base_url``, ``.requests``, ``.script(...)``."""
    with FakeProvider() as server:
        yield server
