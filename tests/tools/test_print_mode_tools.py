"""``tangents -p`` with tools, end to end: the real program in a working
directory, a real database, the fake provider scripting tool calls."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from fake_provider import Reply, ToolCall

from tests.integration.cli import anthropic_env, export, outcome_lines, sessions, tangents_command

CLAUDE = "anthropic/claude-test"


def tangents(work: Path, db: Path, fake, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tangents_command() + ["--db", str(db), "-m", CLAUDE, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=work,
        env={**os.environ, **anthropic_env(fake.base_url)},
    )


def tool_results(body: dict) -> list[dict]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_allowed_tools_run_and_tool_activity_goes_to_stderr(
    fake_provider, work: Path, tmp_path: Path
) -> None:
    db = tmp_path / "data" / "t.db"
    fake_provider.script(
        Reply(text="Reading first.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(
            tool_calls=[
                ToolCall("write_file", {"path": "out/summary.txt", "content": "hello world\n"}),
                ToolCall("run_command", {"command": "cat out/summary.txt"}),
            ]
        ),
        Reply(text="Wrote the summary."),
    )
    result = tangents(
        work,
        db,
        fake_provider,
        "--allow-tools",
        "write_file,run_command",
        "-p",
        "Summarize my notes",
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Reading first.\nWrote the summary.\n"
    assert (work / "out" / "summary.txt").read_text() == "hello world\n"
    lines = outcome_lines(result.stderr)
    assert lines[0] == 'tool: read_file {"path": "notes.txt"}'
    assert lines[1].startswith("tool: read_file done in ")
    assert any(line.startswith("tool: write_file done in") for line in lines)
    assert "denied" not in result.stderr
    assert [t["name"] for t in fake_provider.requests[0].body["tools"]] == [
        "read_file",
        "list_directory",
        "search_text",
        "write_file",
        "run_command",
    ]
    command_result = tool_results(fake_provider.last_request.body)[-1]
    assert "hello world" in command_result["content"][0]["text"]
    [listed] = sessions(db)
    doc = export(db, listed["id"])
    roles = [e["payload"]["role"] for e in doc["entries"] if e["type"] == "message"]
    assert roles == ["user", "assistant", "tool_result", "assistant", "tool_result", "assistant"]


def test_side_effect_tools_are_denied_without_allow_tools(
    fake_provider, work: Path, tmp_path: Path
) -> None:
    db = tmp_path / "data" / "t.db"
    fake_provider.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "x.txt", "content": "x"})]),
        Reply(text="I could not write it."),
    )
    result = tangents(work, db, fake_provider, "-p", "Write x")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "I could not write it.\n"
    assert not (work / "x.txt").exists()
    [note] = [line for line in result.stderr.splitlines() if "denied" in line]
    assert note == (
        "tangents: denied write_file: tools with side effects need --allow-tools write_file in print mode"
    )
    [sent] = tool_results(fake_provider.last_request.body)
    assert sent["is_error"] and "--allow-tools write_file" in sent["content"][0]["text"]


def test_extra_root_and_refused_paths(fake_provider, work: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "t.db"
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("shared data\n")
    fake_provider.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": "../shared/data.txt"})]),
        Reply(text="first"),
        Reply(tool_calls=[ToolCall("read_file", {"path": "../shared/data.txt"})]),
        Reply(text="second"),
    )
    refused = tangents(work, db, fake_provider, "-p", "Read the shared file")
    assert refused.returncode == 0, refused.stderr
    [sent] = tool_results(fake_provider.last_request.body)
    assert sent["is_error"] and "refused" in sent["content"][0]["text"]
    assert re.search(
        r"^tool: read_file failed in [0-9.]+ s: refused: '../shared/data.txt'", refused.stderr, re.M
    )

    allowed = tangents(work, db, fake_provider, "--extra-root", str(shared), "-p", "Read it again")
    assert allowed.returncode == 0, allowed.stderr
    [sent] = tool_results(fake_provider.last_request.body)
    assert not sent.get("is_error") and "shared data" in sent["content"][0]["text"]


def test_step_limit_exits_nonzero_with_a_message(fake_provider, work: Path, tmp_path: Path) -> None:
    db = tmp_path / "data" / "t.db"
    config = tmp_path / "config.toml"
    config.write_text("max_tool_steps = 1\n")
    fake_provider.script(*[Reply(tool_calls=[ToolCall("list_directory", {})]) for _ in range(2)])
    result = tangents(work, db, fake_provider, "--config", str(config), "-p", "loop")
    assert result.returncode == 1
    assert "stopped after 1 tool steps (max_tool_steps)" in result.stderr
    assert len(fake_provider.requests) == 2
