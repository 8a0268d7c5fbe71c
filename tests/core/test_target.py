"""One rule for where a model's requests go (:func:`core.chat.target.target_for`):
the base URL, the key variable and the wire, decided once (issues 31 and 32)."""

from __future__ import annotations

from itertools import product

import pytest

from core.chat.target import remember_endpoint, target_for
from core.providers.target import Target
from core.sessions.entries import Entry, ModelChange
from core.settings import Endpoint, Settings

FLAG = "http://127.0.0.1:7001/v1"
LAB = "http://127.0.0.1:7002/v1"
SAVED = "http://127.0.0.1:7003/v1"
CONFIG = "http://127.0.0.1:7004/v1"
ENV = "http://127.0.0.1:7005/v1"
LAB_ENDPOINT = Endpoint(name="lab", base_url=LAB, api_key_env="LAB_TOKEN", models=("qwen3",))


def _saved_path(model: str, base: str) -> list[Entry]:
    return [Entry.new("s1", None, ModelChange(model=model, api_base=base))]


def _decide(
    model: str,
    *,
    flag: bool,
    endpoint: bool,
    saved: bool,
    config: bool,
    env: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> Target:
    if env:
        monkeypatch.setenv("OPENAI_BASE_URL", ENV)
    else:
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    settings = Settings(
        endpoints=(LAB_ENDPOINT,) if endpoint else (), api_base=CONFIG if config else None
    )
    path = _saved_path(model, SAVED) if saved else []
    return target_for(model, settings, FLAG if flag else None, path=path)


@pytest.mark.parametrize(("flag", "endpoint", "saved", "config", "env"), product((1, 0), repeat=5))
def test_the_first_named_base_wins_and_deciding_again_changes_nothing(
    flag, endpoint, saved, config, env, monkeypatch
) -> None:
    """``--api-base``, then the ``[[endpoints]]`` entry, the saved endpoint,
    the config's ``api_base``, the environment's, the provider's own; and a
    target decided again from its own base URL (as a turn, a compaction or
    the window probe do) is the same."""
    remember_endpoint(SAVED)  # named once, with --api-base
    model = "lab/qwen3" if endpoint else "openai/qwen3"
    target = _decide(
        model,
        flag=bool(flag),
        endpoint=bool(endpoint),
        saved=bool(saved),
        config=bool(config),
        env=bool(env),
        monkeypatch=monkeypatch,
    )
    expected = next(
        (
            base
            for base, given in ((FLAG, flag), (LAB, endpoint), (SAVED, saved), (CONFIG, config))
            if given
        ),
        ENV if env else None,
    )
    assert target.api_base == expected
    assert target.model == "openai/qwen3"
    assert target.wire == "openai"
    settings = Settings(endpoints=(LAB_ENDPOINT,) if endpoint else ())
    again = target_for(model, settings, target.api_base)
    assert (again.model, again.api_base, again.key_env, again.wire) == (
        target.model,
        target.api_base,
        target.key_env,
        target.wire,
    )


def test_api_base_wins_over_an_endpoint_entry_and_keeps_its_key_variable(monkeypatch) -> None:
    monkeypatch.setenv("LAB_TOKEN", "lab-token-0123")
    settings = Settings(endpoints=(LAB_ENDPOINT,))
    target = target_for("lab/qwen3", settings, FLAG)
    assert (target.api_base, target.key_env, target.api_key) == (
        FLAG,
        "LAB_TOKEN",
        "lab-token-0123",
    )
    assert target.chosen_base == FLAG  # saved with the model, as --api-base always was


def test_a_saved_endpoint_the_user_never_named_is_passed_over() -> None:
    target = target_for("openai/qwen3", Settings(), path=_saved_path("openai/qwen3", SAVED))
    assert (target.api_base, target.source) == (None, "provider")


def test_a_key_is_needed_only_where_the_server_needs_one(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    hosted = target_for("openai/gpt-4o", Settings())
    assert hosted.missing_key() == "no API key for openai: set OPENAI_API_KEY"
    monkeypatch.setenv("OPENAI_BASE_URL", ENV)  # a local server named by the environment
    local = target_for("openai/gpt-4o", Settings())
    assert (local.api_base, local.missing_key()) == (ENV, None)
    lab = target_for("lab/qwen3", Settings(endpoints=(LAB_ENDPOINT,)), FLAG)
    assert lab.missing_key() == "no API key for lab: set LAB_TOKEN"
    monkeypatch.setenv("LAB_TOKEN", "lab-token-0123")
    assert lab.missing_key() is None


def test_the_environment_names_the_base_of_its_own_wire_only(monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", ENV)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    claude = target_for("anthropic/claude-sonnet-4-5", Settings())
    assert (claude.api_base, claude.wire, claude.source) == (ENV, "anthropic", "environment")
    assert claude.chosen_base is None  # not saved with the session: the environment decides
    assert target_for("openai/gpt-4o", Settings()).api_base is None
