"""What commands and MCP servers may see of our environment: no key of any
kind, unless the user lets one through by name; and a server's stderr quoted
in a notice is redacted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.settings import (
    ConfigError,
    Endpoint,
    McpServer,
    Settings,
    ToolSettings,
    load_settings,
)
from core.tools import Roots, ToolRegistry, builtin_tools
from core.tools.env import EnvPolicy, litellm_key_names, looks_secret
from tests.tools.test_builtin import call, text

SERVER = str(Path(__file__).with_name("mcp_echo_server.py"))
ROOT = Path(__file__).resolve().parents[2]

HIDDEN_BY_NAME = (
    "LAB_TOKEN",
    "GITHUB_TOKEN",
    "OPENAI_API_KEY",
    "SOME_KEY",
    "API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "MY_SECRET",
    "DB_SECRET_FILE_CONTENT",
    "PGPASSWORD",
    "SMTP_PASSWORD_2",
    "WATSONX_APIKEY",
    "OPENAI_API_KEY_2",
    "ANTHROPIC_API_KEY2",
    "GITHUB_TOKEN_OLD",
    "X_AUTH_TOKEN_PROD",
    "DB_PASS",
    "PASSPHRASE",
    "GOOGLE_CREDENTIALS",
    "BASIC_AUTH",
    "NPM_AUTH",
    "AWS_ACCESS_KEY_ID",
)
VISIBLE = (
    "PATH",
    "HOME",
    "PWD",
    "LANG",
    "TOKENIZERS_PARALLELISM",
    "KEYBOARD",
    "MONKEY",
    "PASSAGE_DIR",
    "AUTHOR_NAME",
    "SECRETARY_X",
)
CREDENTIAL_URLS = {
    "DATABASE_URL": "postgres://u:canary-db-pass@db.example:5432/app",
    "REDIS_URL": "redis://:canary-redis-pass@cache.example/0",
    "UPSTREAM": "https://canary-token-0123456789abcdef@git.example/repo.git",
    "HOOK_URL": "https://hooks.example/notify?token=canary-hook-token",
    "MIRRORS": "https://a.example/ https://bob:canary-mirror-pass@b.example/",
}
"""Values that carry a credential although their names do not say so."""
PLAIN_URLS = {"HOMEPAGE": "https://example.com/docs", "PROXY_HOST": "http://proxy.example:8080"}


def test_names_that_look_like_keys() -> None:
    assert [n for n in HIDDEN_BY_NAME if not looks_secret(n)] == []
    assert [n for n in VISIBLE if looks_secret(n)] == ["SECRETARY_X"]


def test_litellm_provider_keys_are_read_without_importing_litellm() -> None:
    names = litellm_key_names()
    assert {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AWS_ACCESS_KEY_ID"} <= names
    assert not any(n.endswith(("_API_BASE", "_VERSION")) for n in names)
    probe = (
        "import sys; from core.tools.env import litellm_key_names; "
        "assert litellm_key_names(); assert 'litellm' not in sys.modules"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def test_policy_from_settings(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[[endpoints]]\nname = "lab"\nbase_url = "http://127.0.0.1:1/v1"\napi_key_env = "LABKEY"\n'
        '[tools]\nenv_passthrough = ["GITHUB_TOKEN"]\n'
    )
    policy = EnvPolicy.from_settings(load_settings(config))
    env = {name: "x" for name in (*HIDDEN_BY_NAME, *VISIBLE, "LABKEY")}
    seen = policy.environment(env)
    assert sorted(seen) == sorted({"GITHUB_TOKEN", *VISIBLE} - {"SECRETARY_X"})
    assert "GITHUB_TOKEN" not in EnvPolicy().environment(env)
    assert "SOME_KEY" in policy.environment(env, allowed=["SOME_KEY"])

    config.write_text('[tools]\nenv_passthrough = "GITHUB_TOKEN"\n')
    with pytest.raises(ConfigError, match="tools.env_passthrough: must be an array"):
        load_settings(config)


async def test_run_command_sees_no_key(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in HIDDEN_BY_NAME:
        monkeypatch.setenv(name, f"canary-{name.lower()}")
    monkeypatch.setenv("LABKEY", "canary-labkey")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "canary-aws-id")
    monkeypatch.setenv("HARMLESS", "visible")
    settings = Settings(
        endpoints=(Endpoint("lab", "http://127.0.0.1:1/v1", api_key_env="LABKEY"),),
        tools=ToolSettings(env_passthrough=("SOME_KEY",)),
    )
    registry = ToolRegistry.default(settings, cwd=work)
    output = text(await call(registry, "run_command", command="env"))
    assert "HARMLESS=visible" in output
    assert "SOME_KEY=canary-some_key" in output, "let through by env_passthrough"
    leaked = [line for line in output.splitlines() if "canary" in line and "SOME_KEY" not in line]
    assert leaked == []


async def test_run_command_sees_no_url_with_a_credential(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**CREDENTIAL_URLS, **PLAIN_URLS}.items():
        monkeypatch.setenv(name, value)
    registry = ToolRegistry.default(Settings(), cwd=work)
    output = text(await call(registry, "run_command", command="env"))
    assert [line for line in output.splitlines() if "canary" in line] == []
    for name, value in PLAIN_URLS.items():
        assert f"{name}={value}" in output
    allowed = EnvPolicy(passthrough=frozenset({"DATABASE_URL"}))
    assert allowed.environment(CREDENTIAL_URLS) == {"DATABASE_URL": CREDENTIAL_URLS["DATABASE_URL"]}


async def test_mcp_servers_get_the_filtered_environment_and_what_their_config_names(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_TOKEN", "canary-lab")
    monkeypatch.setenv("SHARED_TOKEN", "canary-shared")
    monkeypatch.setenv("HARMLESS", "visible")
    server = McpServer(
        "env",
        command=sys.executable,
        args=(SERVER,),
        env={"EXPLICIT_TOKEN": "given-in-config"},
        env_passthrough=("SHARED_TOKEN",),
    )
    registry = ToolRegistry(
        builtin_tools(), roots=Roots.create(work), mcp_servers=(server,), mcp_ready_wait=60
    )
    try:
        assert await registry.prepare() == []
        tool = registry.get("env__environment")
        assert tool is not None
        seen = dict(
            line.split("=", 1)
            for line in (await tool.run({}, registry.context())).content[0].text.splitlines()
        )
    finally:
        await registry.aclose()
    assert seen["HARMLESS"] == "visible"
    assert seen["EXPLICIT_TOKEN"] == "given-in-config"
    assert seen["SHARED_TOKEN"] == "canary-shared"
    assert "LAB_TOKEN" not in seen and "ANTHROPIC_API_KEY" not in seen
    assert not [v for v in seen.values() if "sk-" in v]


async def test_a_servers_stderr_is_redacted_in_its_notice(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LAB_TOKEN", "canary-lab-0123456789")
    leak = (
        "import os, sys; sys.stderr.write('config: ' + os.environ['GIVEN_TOKEN'] + ' '"
        " + sys.argv[1] + ' sk-ant-api03-abcdefghijklmnop'); sys.exit(2)"
    )
    server = McpServer(
        "leaky",
        command=sys.executable,
        args=("-c", leak, "canary-lab-0123456789"),
        env={"GIVEN_TOKEN": "canary-given-0123456789"},
    )
    registry = ToolRegistry(
        builtin_tools(), roots=Roots.create(work), mcp_servers=(server,), mcp_ready_wait=60
    )
    try:
        [notice] = await registry.prepare()
    finally:
        await registry.aclose()
    assert notice.startswith("MCP server 'leaky' could not start:")
    assert "config: [redacted] [redacted] [redacted]" in notice
    assert "canary" not in notice and "sk-ant" not in notice


def test_tangents_environ_is_not_readable_by_what_it_starts() -> None:
    """Commands run as the same user could read /proc/TANGENTS/environ (every
    key is there); a non-dumpable process's is not readable without
    CAP_SYS_PTRACE. Checked on the flag itself: these tests may run as root,
    which can read anything."""
    probe = (
        "import ctypes; from core.tools.process import supervised; "
        "prctl = ctypes.CDLL(None).prctl; assert prctl(3, 0, 0, 0, 0) == 1; "
        "supervised(['true']); print(prctl(3, 0, 0, 0, 0))"  # 3: PR_GET_DUMPABLE
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "0\n"
