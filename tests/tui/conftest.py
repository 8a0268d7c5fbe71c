"""Fixtures for the app's Pilot tests (the chat view's own tests have theirs)."""

from __future__ import annotations

import pytest

FAKE_KEY = "sk-test-0123456789abcdefghij"


@pytest.fixture
def fake_args(fake_provider, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Flags that send ``openai/test`` to the fake provider (with a made-up key)."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return ["--model", "openai/test", "--api-base", f"{fake_provider.base_url}/v1"]
