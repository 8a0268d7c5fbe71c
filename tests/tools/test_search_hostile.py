"""A catastrophic regular expression in ``search_text`` (which runs without
approval, so a file the model reads can ask for it) cannot hold the app: the
search stops at its limit, and cancelling the call (Esc) stops it at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from fake_provider import Reply, ToolCall

import core.tools.builtin as builtin
from core.tools import ToolError, ToolRegistry
from tests.integration.cli import anthropic_env, tangents_command
from tests.tools.procs import alive
from tests.tools.test_builtin import call, text

EVIL = "(a+)+$"
"""Against 40 ``a`` and a ``b``, Python's ``re`` backtracks for hours."""


def children_running(script: str) -> list[int]:
    """Our child processes running ``script``."""
    me = str(os.getpid())
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2 :].split()[1].decode() == me and script.encode() in cmdline:
            found.append(int(name))
    return [pid for pid in found if alive(pid)]


@pytest.fixture
def evil_file(work: Path) -> Path:
    path = work / "evil.txt"
    path.write_text("a" * 40 + "b\n")
    return path


def test_print_mode_search_with_a_catastrophic_pattern_ends(
    fake_provider, work: Path, tmp_path: Path, evil_file: Path
) -> None:
    """The issue's steps, through the real program: the model asks for the
    search, the answer still comes, the program exits."""
    fake_provider.script(
        Reply(tool_calls=[ToolCall("search_text", {"pattern": EVIL})]), Reply(text="Searched.")
    )
    process = subprocess.Popen(
        tangents_command()
        + ["--db", str(tmp_path / "t.db"), "-m", "anthropic/claude-test", "-p", "search"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=work,
        env={**os.environ, **anthropic_env(fake_provider.base_url)},
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate(timeout=10)
        raise AssertionError("tangents was still searching after 60 s") from None
    assert process.returncode == 0, err
    assert out == "Searched.\n"
    [result] = [
        block
        for message in fake_provider.last_request.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert result["content"][0]["text"] == (
        f"no matches for {EVIL!r} in . (stopped after {builtin.SEARCH_SECONDS:g} s; "
        "narrow the path or the pattern)"
    )


async def test_the_search_stops_at_its_limit(
    registry: ToolRegistry, evil_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builtin, "SEARCH_SECONDS", 0.5)
    (evil_file.parent / "plain.txt").write_text("aaa\n")
    result = await asyncio.wait_for(call(registry, "search_text", pattern="a+$"), 30)
    assert text(result) == "plain.txt:1: aaa\n[1 matches in 1 files]", "normal searches work"
    result = await asyncio.wait_for(call(registry, "search_text", pattern=EVIL), 30)
    assert text(result) == (
        f"no matches for {EVIL!r} in . (stopped after 0.5 s; narrow the path or the pattern)"
    )
    assert children_running(builtin.SEARCH_WORKER) == []


async def test_cancelling_a_search_stops_it(registry: ToolRegistry, evil_file: Path) -> None:
    """Esc cancels the call's task: the search process is killed at once."""
    task = asyncio.create_task(call(registry, "search_text", pattern=EVIL))
    for _ in range(500):
        if children_running(builtin.SEARCH_WORKER):
            break
        await asyncio.sleep(0.01)
    assert children_running(builtin.SEARCH_WORKER), "the search started"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert children_running(builtin.SEARCH_WORKER) == []


async def test_bad_patterns_are_refused(registry: ToolRegistry) -> None:
    for pattern, why in (("(unclosed", "missing )"), ("a{99999999999}", "too large")):
        with pytest.raises(ToolError) as raised:
            await call(registry, "search_text", pattern=pattern)
        assert f"invalid regular expression {pattern!r}" in str(raised.value)
        assert why in str(raised.value)
