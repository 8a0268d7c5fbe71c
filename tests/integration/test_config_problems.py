"""A config with wrong values is refused before anything starts (issue 37):
every problem on its own line naming the key and what is wrong, exit code 2,
never a traceback, the same in print mode, the sessions commands and the app."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.settings import ConfigError, load_settings
from tests.integration.cli import run

MODES = {
    "print mode": ("-m", "demo", "-p", "hi"),
    "sessions": ("sessions", "list"),
    "app": (),
}

BAD = [
    ('retries = "many"', 'retries: must be a whole number, not "many"'),
    ("retries = 1e999", "retries: must be a whole number, not inf"),
    ("retries = -1", "retries: must be between 0 and 100, not -1"),
    ("context_windows = [1]", "context_windows: must be a table, not an array"),
    ('[context_windows]\n"local/x" = -5', 'context_windows."local/x": must be between 1 and'),
    (
        '[[endpoints]]\nname = "lab"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = ["X"]',
        "endpoints[0].api_key_env: must be a string, not an array",
    ),
    ('[[endpoints]]\nname = "lab"', "endpoints[0].base_url: missing"),
    ("system = 12", "system: must be a string, not 12"),
    ('thinking = "max"', 'thinking: must be one of off, low, medium, high, not "max"'),
    ("max_tool_steps = 0", "max_tool_steps: must be between 1 and"),
    ('[tools]\nmcp_ready_wait = "soon"', 'tools.mcp_ready_wait: must be a number, not "soon"'),
    ("[compaction]\nenabled = 1", "compaction.enabled: must be true or false, not 1"),
    ("colour = 3", "colour: unknown setting"),
    (
        '[[mcp_servers]]\nname = "m"\nenv = { PORT = 1 }',
        "mcp_servers[0].env.PORT: must be a string",
    ),
]


def write(tmp_path: Path, text: str | bytes) -> Path:
    config = tmp_path / "config.toml"
    if isinstance(text, str):
        config.write_text(text + "\n")
    else:
        config.write_bytes(text)
    return config


@pytest.mark.parametrize(("text", "line"), BAD)
def test_each_wrong_value_is_one_line_naming_the_key(tmp_path: Path, text: str, line: str) -> None:
    config = write(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_settings(config)
    lines = str(raised.value).splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{config}: {line}"), lines


def test_every_problem_is_listed_at_once(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        'retries = "many"\nsystem = 12\ncolour = 3\ncontext_windows = { "a" = -5, "b" = "x" }',
    )
    with pytest.raises(ConfigError) as raised:
        load_settings(config)
    assert [line.split(": ", 2)[1] for line in str(raised.value).splitlines()] == [
        "retries",
        "system",
        "colour",
        "context_windows.a",
        "context_windows.b",
    ]
    assert all(line.startswith(f"{config}: ") for line in str(raised.value).splitlines())


def test_a_value_from_the_environment_is_named_by_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TANGENTS_THINKING", "max")
    with pytest.raises(
        ConfigError, match='TANGENTS_THINKING: must be one of off, low, medium, high, not "max"'
    ):
        load_settings(write(tmp_path, ""))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('retries = "many"\nsystem = 12', "retries: must be a whole number"),
        ("retries = 1e999", "retries: must be a whole number"),
        ("context_windows = [1]", "context_windows: must be a table"),
        pytest.param(b'system = "caf\xe9"\n', "not UTF-8 text", id="latin-1"),
        pytest.param(b"retries = " + b"9" * 5000 + b"\n", "not valid TOML", id="5000-digits"),
    ],
)
def test_the_program_refuses_a_bad_config_in_every_mode(
    tmp_path: Path, mode: str, text: str | bytes, line: str
) -> None:
    config = write(tmp_path, text)
    result = run("--config", str(config), "--db", str(tmp_path / "t.db"), *MODES[mode], timeout=30)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert any(line in shown for shown in lines), result.stderr
    assert all(shown.startswith(f"tangents: {config}: ") for shown in lines), result.stderr
    assert not (tmp_path / "t.db").exists(), "nothing was started"


@pytest.mark.parametrize("kind", ["fifo", "directory", "huge"])
def test_a_config_that_is_no_small_regular_file_is_refused_at_once(
    tmp_path: Path, kind: str
) -> None:
    config = tmp_path / "config.toml"
    if kind == "fifo":
        os.mkfifo(config)  # opening it for reading would wait for a writer forever
    elif kind == "directory":
        config.mkdir()
    else:
        config.write_text("# " + "x" * (2 * 1024 * 1024) + "\n")
    result = run("--config", str(config), "-m", "demo", "-p", "hi", timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"tangents: {config}: ")
    assert result.stderr.count("\n") == 1
