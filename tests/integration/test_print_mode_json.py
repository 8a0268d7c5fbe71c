"""``tangents --json -p``: the conversation's event stream as JSON lines, from
the real program against the fake provider (through the real anthropic SDK,
which carries thinking)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from fake_provider import Reply, ToolCall

from tests.integration.cli import anthropic_env, export, run, tangents_command

CLAUDE = "anthropic/claude-test"


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_text_and_thinking_stream_as_json_lines_with_the_saved_ids(
    fake_provider, tmp_path: Path
) -> None:
    db = tmp_path / "t.db"
    fake_provider.script(
        Reply(
            text="Paris is the capital.",
            thinking="The user asks about France.",
            usage={"input_tokens": 12, "output_tokens": 7},
        )
    )
    done = run(
        "--db", str(db), "-m", CLAUDE, "--thinking", "low", "--json", "-p", "capital of France?",
        env=anthropic_env(fake_provider.base_url),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = events(done.stdout)
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "session" and kinds[-1] == "turn_ended"
    assert "".join(x["text"] for x in lines if x["type"] == "thinking") == (
        "The user asks about France."
    )
    assert "".join(x["text"] for x in lines if x["type"] == "text") == "Paris is the capital."
    assert kinds.index("thinking") < kinds.index("text")
    saved = [e for x in lines if x["type"] == "entries_saved" for e in x["entries"]]
    question, answer = [e for e in saved if e.get("role") in ("user", "assistant")]
    assert answer["parent_id"] == question["id"] and answer["stop_reason"] == "stop"
    assert answer["usage"]["input_tokens"] == 12 and answer["usage"]["output_tokens"] == 7
    assert lines[-1] == {
        "type": "turn_ended",
        "agent": None,  # the session's model, no round-table agent
        "stop": "answered",
        "tool_steps": 0,
        "entry_id": answer["id"],
        "error": None,
    }
    stored = {e["id"] for e in export(db, lines[0]["id"])["entries"]}
    assert {question["id"], answer["id"]} <= stored


def test_tool_calls_show_their_states_and_side_effects_need_allow_tools(
    fake_provider, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    fake_provider.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "a.txt", "content": "hi\n"}, id="w1")]),
        Reply(text="Written."),
    )
    done = subprocess_in(work, fake_provider, "--allow-tools", "write_file")
    assert done.returncode == 0, done.stderr
    lines = events(done.stdout)
    tool = [x for x in lines if x["type"] == "tool"]
    assert [x["state"] for x in tool][-2:] == ["running", "done"]
    assert tool[-1]["name"] == "write_file" and tool[-1]["arguments"]["path"] == "a.txt"
    assert (work / "a.txt").read_text() == "hi\n"
    assert lines[-1]["type"] == "turn_ended" and lines[-1]["tool_steps"] == 1

    fake_provider.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "b.txt", "content": "no"}, id="w2")]),
        Reply(text="I could not write."),
    )
    done = subprocess_in(work, fake_provider)
    tool = [x for x in events(done.stdout) if x["type"] == "tool"]
    assert tool[-1]["state"] == "denied" and tool[-1]["is_error"]
    assert not (work / "b.txt").exists()
    assert "denied write_file" in done.stderr


def test_json_without_print_mode_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run("--db", str(tmp_path / "t.db"), "--json")
    assert done.returncode == 2
    assert done.stderr == "tangents: --json goes with -p (tangents --json -p 'a question')\n"


def subprocess_in(work: Path, fake_provider, *extra: str) -> subprocess.CompletedProcess[str]:
    """``tangents --json -p`` run in ``work`` (the tools' directory)."""
    return subprocess.run(
        [*tangents_command(), "--db", str(work.parent / "t.db"), "-m", CLAUDE, "--json"]
        + list(extra)
        + ["-p", "write a.txt"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=work,
        env={**os.environ, **anthropic_env(fake_provider.base_url)},
    )
