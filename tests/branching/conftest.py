"""The branching tests' fake provider arguments."""

from __future__ import annotations

import pytest

from tests.branching.chat_steps import FAKE_KEY, write_config


@pytest.fixture
def fake_args(fake_provider, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``openai/test`` on the fake provider; branches are left without a summary question."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    write_config("never")
    return ["--model", "openai/test", "--api-base", f"{fake_provider.base_url}/v1"]
