"""``run_command`` never leaves processes behind, even ones that leave its
process group (``setsid``, double forks), and even when Tangents itself is
SIGKILLed; and the program exits without an "Event loop is closed" traceback."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

from fake_provider import Reply, ToolCall

from core.tools import ToolRegistry
from tests.integration.cli import anthropic_env, tangents_command
from tests.tools.procs import kill_quietly, still_alive, wait_for_pids
from tests.tools.test_builtin import call, text

ESCAPE = "setsid sh -c 'echo $$ >> pids; exec sleep 991' &"
"""A child that leaves the command's process group and session."""
DAEMON = "(setsid sh -c 'echo $$ >> pids; exec sleep 992' &);"
"""A double fork: the daemon's parent exits at once, so it is nobody's child."""


def until_written(count: int) -> str:
    """Shell: wait until ``count`` pids are in the file (the children have started)."""
    return f"until [ $(cat pids 2>/dev/null | wc -l) -ge {count} ]; do sleep 0.01; done;"


async def test_children_that_left_the_group_are_killed(registry: ToolRegistry, work: Path) -> None:
    result = await call(
        registry,
        "run_command",
        command=f"echo $$ > pids; {ESCAPE} {DAEMON} {until_written(3)} echo started",
    )
    pids = wait_for_pids(work / "pids", 3)
    try:
        assert text(result) == "started\n[exit code 0]"
        assert still_alive(pids, 10) == []
    finally:
        kill_quietly(pids)


async def test_timeout_kills_children_that_left_the_group(
    registry: ToolRegistry, work: Path
) -> None:
    result = await call(
        registry, "run_command", command=f"{ESCAPE} {DAEMON} sleep 30", timeout_seconds=1
    )
    pids = wait_for_pids(work / "pids", 2)
    try:
        assert result.is_error and "timed out after 1 s" in text(result)
        assert still_alive(pids, 10) == []
    finally:
        kill_quietly(pids)


def print_mode(work: Path, tmp_path: Path, fake, command: str) -> subprocess.Popen[str]:
    fake.script(Reply(tool_calls=[ToolCall("run_command", {"command": command})]), Reply(text="ok"))
    return subprocess.Popen(
        tangents_command()
        + ["--db", str(tmp_path / "t.db"), "-m", "anthropic/claude-test"]
        + ["--allow-tools", "run_command", "-p", "run it"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=work,
        env={**os.environ, **anthropic_env(fake.base_url)},
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=10)
        raise AssertionError("tangents did not exit within 60 s") from None


def test_print_mode_setsid_child_does_not_outlive_the_call(
    fake_provider, work: Path, tmp_path: Path
) -> None:
    """The issue's steps: ``setsid sleep 991 &`` in run_command."""
    command = f"{ESCAPE} {until_written(1)} echo started"
    process = print_mode(work, tmp_path, fake_provider, command)
    out, err = finish(process)
    assert process.returncode == 0, err
    assert out == "ok\n"
    pids = wait_for_pids(work / "pids", 1)
    try:
        assert "Traceback" not in err and "Event loop is closed" not in err, err
        assert still_alive(pids, 10) == []
    finally:
        kill_quietly(pids)


def test_sigkill_of_tangents_ends_its_running_command(
    fake_provider, work: Path, tmp_path: Path
) -> None:
    """Tangents is SIGKILLed while a command runs: the shell, its children and
    the ones that left its group all end."""
    command = f"echo $$ >> pids; {ESCAPE} {DAEMON} exec sleep 993"
    process = print_mode(work, tmp_path, fake_provider, command)
    pids: list[int] = []
    try:
        pids = wait_for_pids(work / "pids", 3)
        process.send_signal(signal.SIGKILL)
        finish(process)
        assert still_alive(pids, 10) == []
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        kill_quietly(pids)


async def test_a_stopped_supervisor_killed_at_the_timeout_leaves_no_daemon(
    registry: ToolRegistry, work: Path
) -> None:
    """The supervisor is SIGSTOPped (so it cannot sweep), then the timeout kills it:
    the daemon it adopted must go too."""
    running = asyncio.create_task(
        call(
            registry,
            "run_command",
            command=f"echo $PPID > supervisor; {DAEMON} {until_written(1)} sleep 30",
            timeout_seconds=2,
        )
    )
    (daemon,) = await asyncio.to_thread(wait_for_pids, work / "pids", 1)
    (supervisor,) = await asyncio.to_thread(wait_for_pids, work / "supervisor", 1)
    try:
        os.kill(supervisor, signal.SIGSTOP)
        result = await asyncio.wait_for(running, 30)
        assert result.is_error and "timed out after 2 s" in text(result)
        assert still_alive([daemon], 10) == []
    finally:
        kill_quietly([daemon, supervisor])
