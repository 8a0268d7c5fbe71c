"""Keys never leak through tools: canary values in every kind of key variable,
every tool and MCP server run (and their failure paths) through the real
program, then the database, every export format, the config and data
directories, the logs, what reached the provider and everything the program
printed are searched for the canaries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_provider import Fail, Reply, ToolCall

from core.formats.export import EXPORT_FORMATS
from tests.integration.cli import run, tangents_command

pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).with_name("mcp_echo_server.py"))
CLAUDE = "anthropic/claude-test"

CANARIES = {
    name: f"canary-{name.lower().replace('_', '-')}-7f3a9c"
    for name in (
        "LAB_TOKEN",  # the README's own endpoint example
        "LABKEY",  # an api_key_env that does not look like a key
        "ANTHROPIC_API_KEY",  # the key this very run uses
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "AWS_ACCESS_KEY_ID",  # a litellm credential whose name does not end in _KEY
        "AWS_SECRET_ACCESS_KEY",
        "GITHUB_TOKEN",
        "PGPASSWORD",
        "DB_PASSWORD_PROD",
        "MY_SECRET_THING",
        "SOME_KEY",
    )
}

LEAKY_SERVER = "import os, sys; sys.stderr.write(repr(dict(os.environ))); sys.exit(2)"
"""A server that dumps its whole environment to stderr and fails to start."""


def config_text() -> str:
    return f"""
[tools]
mcp_ready_wait = 60

[[endpoints]]
name = "lab"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "LAB_TOKEN"

[[endpoints]]
name = "lab2"
base_url = "http://127.0.0.1:9/v1"
api_key_env = "LABKEY"

[[mcp_servers]]
name = "echo"
command = {json.dumps(sys.executable)}
args = [{json.dumps(SERVER)}]

[[mcp_servers]]
name = "leaky"
command = {json.dumps(sys.executable)}
args = ["-c", {json.dumps(LEAKY_SERVER)}]
"""


def test_no_canary_reaches_anything_the_program_writes(
    fake_provider, work: Path, tmp_path: Path
) -> None:
    config_dir = Path(os.environ["XDG_CONFIG_HOME"]) / "tangents"
    config_dir.mkdir(parents=True, exist_ok=True)
    config = config_dir / "config.toml"
    config.write_text(config_text())
    db = Path(os.environ["XDG_DATA_HOME"]) / "canary.db"
    env = {
        **os.environ,
        **CANARIES,
        "ANTHROPIC_BASE_URL": fake_provider.base_url,
        "HARMLESS_MARKER": "harmless-visible",
    }
    fake_provider.script(
        Reply(
            tool_calls=[
                ToolCall("run_command", {"command": "env"}),
                ToolCall("run_command", {"command": "tr '\\0' '\\n' < /proc/self/environ"}),
                ToolCall("run_command", {"command": "tr '\\0' '\\n' < /proc/$PPID/environ"}),
                ToolCall("read_file", {"path": "notes.txt"}),
                ToolCall("list_directory", {}),
                ToolCall("search_text", {"pattern": "canary|TOKEN|KEY"}),
            ]
        ),
        Reply(
            tool_calls=[
                ToolCall("echo__environment", {}),
                ToolCall("write_file", {"path": "seen.txt", "content": "what I saw"}),
                ToolCall("run_command", {"command": "printenv LAB_TOKEN LABKEY; exit 3"}),
                ToolCall("run_command", {"command": "env; sleep 30", "timeout_seconds": 0.5}),
                ToolCall("no_such_tool", {}),
            ]
        ),
        Reply(text="All done."),
        Fail(401),
        Reply(tool_calls=[ToolCall("run_command", {"command": "env"})]),
        Reply(text="Denied, fine."),
    )
    outputs: list[str] = []

    def tangents(*args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            tangents_command() + ["--db", str(db), "--config", str(config), "-m", CLAUDE, *args],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=work,
            env=env,
        )
        outputs.extend((result.stdout, result.stderr))
        return result

    allow = "run_command,write_file,echo.environment"
    first = tangents("--allow-tools", allow, "-p", "show me everything")
    assert first.returncode == 0, first.stderr
    assert "MCP server 'leaky' could not start" in first.stderr
    failed = tangents("-c", "--allow-tools", allow, "-p", "again")
    assert failed.returncode == 1
    denied = tangents("-c", "-p", "once more")
    assert denied.returncode == 0, denied.stderr

    session_id = json.loads(run("--db", str(db), "sessions", "list", "--json").stdout)[0]["id"]
    for format in EXPORT_FORMATS:
        exported = run("--db", str(db), "sessions", "export", session_id, "--format", format)
        assert exported.returncode == 0, exported.stderr
        outputs.append(exported.stdout + exported.stderr)
    sent = [json.dumps(request.body) for request in fake_provider.requests]
    mcp_result = fake_provider.requests[2].body["messages"][-1]["content"][0]

    files: dict[str, bytes] = {}
    for root in (tmp_path, work):
        for path in root.rglob("*"):
            if path.is_file():
                files[str(path)] = path.read_bytes()
    database = b"".join(data for name, data in files.items() if "canary.db" in name)

    # The tools did run: what they saw is saved, exported and was sent back.
    assert b"harmless-visible" in database
    assert "HARMLESS_MARKER=harmless-visible" in sent[1]
    assert "HARMLESS_MARKER=harmless-visible" in json.dumps(mcp_result), "the MCP server ran"
    assert all("harmless-visible" in output for output in outputs[-len(EXPORT_FORMATS) :])

    for name, value in CANARIES.items():
        assert not [where for where, data in files.items() if value.encode() in data], name
        assert not [text for text in outputs if value in text], name
        assert not [body for body in sent if value in body], name
