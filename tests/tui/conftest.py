"""Fixtures for the app's Pilot tests (the chat view's own tests have theirs)."""

from __future__ import annotations

import itertools

import pytest

FAKE_KEY = "sk-test-0123456789abcdefghij"


@pytest.fixture
def fake_args(fake_provider, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Flags that send ``openai/test`` to the fake provider (with a made-up key)."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return ["--model", "openai/test", "--api-base", f"{fake_provider.base_url}/v1"]


@pytest.fixture
def fixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids made during the test count up (UUIDv7-shaped, after the seeded
    scenes' ``01970000-…``), so a snapshot showing a short id (a reply's
    header) is the same every run."""
    counter = itertools.count(1)

    def next_id() -> str:
        return f"01980000-0000-7000-8000-{next(counter):012d}"

    for module in ("core.sessions.entries", "core.sessions.session", "core.chat.checkpoint"):
        monkeypatch.setattr(f"{module}.uuid7", next_id)
