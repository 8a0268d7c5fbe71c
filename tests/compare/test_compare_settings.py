"""The ``[compare] models`` setting, ``/compare`` parsing and its completion."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import ConfigError, load_settings
from tui.chat import slash
from tui.chat.compare_actions import USAGE, parse_models


def test_compare_models_come_from_the_config(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[compare]\nmodels = ["openai/a", "anthropic/b"]\n')
    assert load_settings(config).compare.models == ("openai/a", "anthropic/b")
    config.write_text('[compare]\nmodels = "openai/a"\n')
    with pytest.raises(ConfigError, match="compare.models: must be an array"):
        load_settings(config)


def test_parse_models_uses_the_default_and_refuses_bad_counts() -> None:
    assert parse_models("openai/a anthropic/b", ()) == ["openai/a", "anthropic/b"]
    assert parse_models("openai/a,anthropic/b openai/a", ()) == ["openai/a", "anthropic/b"]
    assert parse_models("", ("x/1", "x/2", "x/3")) == ["x/1", "x/2", "x/3"]
    assert parse_models("only/one", ("x/1", "x/2")) == USAGE
    assert parse_models("a b c d e", ()) == USAGE
    assert "[compare] models" in parse_models("", ())


def test_compare_completes_its_name_and_the_last_model_name() -> None:
    models = ["openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"]
    assert slash.suggest("/compar") == "e "
    assert slash.suggest("/compare anth", models) == "ropic/claude-sonnet-4-5"
    assert slash.suggest("/compare openai/gpt-4o anth", models) == "ropic/claude-sonnet-4-5"
    assert slash.suggest("/compare openai/gpt-4o ", models) == ""
    assert slash.suggest("/model anth", models) == "ropic/claude-sonnet-4-5"
