"""MCP servers that never answer or flood their stdout cannot keep the real
``tangents`` from exiting (print mode, SIGTERM, ctrl+q in the app), cannot
outlive it (even when it is SIGKILLed), and cost one notice, not a traceback
per line. Every wait is bounded and every test cleans up what it started."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_provider import Stall

from core.settings import McpServer
from core.tools import Roots, ToolRegistry, builtin_tools
from core.tools.mcp_stdio import MAX_LINE
from tests.integration.cli import anthropic_env, tangents_command
from tests.tools.hostile_server import garbage_lines
from tests.tools.procs import kill_quietly, still_alive, wait_for_pids

pytestmark = pytest.mark.slow

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))
EXIT_WITHIN = 30.0
"""Seconds a program gets to exit before the test calls it hung (and kills it)."""
GONE_WITHIN = 10.0


def write_config(tmp_path: Path, mode: str, *extra: str, tools: str = "") -> tuple[Path, Path]:
    """A config with one hostile server; returns (config, the file it writes its pids to)."""
    pidfile = tmp_path / f"{mode}.pids"
    args = [HOSTILE, mode, str(pidfile), *extra]
    config = tmp_path / f"{mode}.toml"
    config.write_text(
        (f"[tools]\n{tools}\n" if tools else "")
        + f'[[mcp_servers]]\nname = "{mode}"\ncommand = {json.dumps(sys.executable)}\n'
        f"args = {json.dumps(args)}\n"
    )
    return config, pidfile


class Program:
    """The real program in its own session; killed (group and servers) if a test fails."""

    def __init__(
        self, args: list[str], cwd: Path, pidfile: Path, env: dict[str, str] | None = None
    ) -> None:
        self.pidfile = pidfile
        self.process = subprocess.Popen(
            tangents_command() + args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )

    @property
    def pids(self) -> list[int]:
        """The server's pid and its grandchild's (waits until written)."""
        return wait_for_pids(self.pidfile)

    def finish(self, timeout: float = EXIT_WITHIN) -> tuple[int, str, str]:
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"tangents did not exit within {timeout:g} s") from None
        return self.process.returncode, out.decode(), err.decode()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.communicate(timeout=10)
        if self.pidfile.exists():
            kill_quietly(self.pids)


@pytest.fixture
def programs() -> Iterator[list[Program]]:
    started: list[Program] = []
    yield started
    for program in started:
        program.kill()


def test_print_mode_exits_although_a_server_never_answers(
    tmp_path: Path, programs: list[Program]
) -> None:
    """The issue's steps: ``tangents --config hang.toml -p hello``."""
    config, pidfile = write_config(tmp_path, "hang")
    program = Program(
        ["--db", str(tmp_path / "t.db"), "--config", str(config), "-m", "demo", "-p", "hello"],
        tmp_path,
        pidfile,
    )
    programs.append(program)
    code, out, err = program.finish()

    assert code == 0, err
    assert out.strip(), "the answer was printed"
    assert "MCP server 'hang' is still starting; its tools are offered once it is ready" in err
    assert "Traceback" not in err
    assert still_alive(program.pids, GONE_WITHIN) == [], "the server and its grandchild are gone"


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_program_leaves_no_server_behind(
    how: signal.Signals, tmp_path: Path, programs: list[Program], fake_provider
) -> None:
    """Killed while waiting for a stalled reply, with a server that never answers
    (and started a grandchild in a session of its own)."""
    fake_provider.script(Stall(seconds=600))
    config, pidfile = write_config(tmp_path, "hang")
    program = Program(
        ["--db", str(tmp_path / "t.db"), "--config", str(config), "-m", "anthropic/claude-test"]
        + ["-p", "hello"],
        tmp_path,
        pidfile,
        anthropic_env(fake_provider.base_url),
    )
    programs.append(program)
    pids = program.pids
    deadline = time.monotonic() + EXIT_WITHIN
    while not fake_provider.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake_provider.requests, "the request was sent"

    program.process.send_signal(how)
    code, _, err = program.finish()

    assert code == (-signal.SIGKILL if how == signal.SIGKILL else 130), err
    assert "Traceback" not in err
    assert still_alive(pids, GONE_WITHIN) == []


@pytest.mark.parametrize("mode", ["flood", "flood-then-serve"])
def test_a_server_flooding_stdout_costs_one_notice(
    mode: str, tmp_path: Path, programs: list[Program]
) -> None:
    """100 MB of garbage lines on stdout: no traceback per line, one notice
    with a count when the server becomes usable, and the program still exits."""
    wait = "mcp_ready_wait = 120" if mode == "flood-then-serve" else ""
    config, pidfile = write_config(tmp_path, mode, "100", tools=wait)
    program = Program(
        ["--db", str(tmp_path / "t.db"), "--config", str(config), "-m", "demo", "-p", "hello"],
        tmp_path,
        pidfile,
    )
    programs.append(program)
    code, out, err = program.finish(EXIT_WITHIN + (120 if wait else 0))

    assert code == 0, err[-2000:]
    assert out.strip()
    assert "Traceback" not in err and len(err) < 2000, err[-2000:]
    if mode == "flood":
        assert f"MCP server '{mode}' is still starting" in err
    else:
        [notice] = [line for line in err.splitlines() if "non-MCP output" in line]
        assert notice == (
            f"tangents: MCP server '{mode}' wrote {garbage_lines(100)} lines of non-MCP output "
            "to its stdout (ignored)"
        )
    assert still_alive(program.pids, GONE_WITHIN) == []


async def test_an_endless_line_is_one_garbage_line(tmp_path: Path, work: Path) -> None:
    """A line longer than the transport reads (40 MB) costs bounded memory and
    counts once; the server is used normally afterwards."""
    pidfile = tmp_path / "long.pids"
    server = McpServer(
        "long",
        command=sys.executable,
        args=(HOSTILE, "long-line-then-serve", str(pidfile), str(MAX_LINE / 2**20 + 8)),
    )
    registry = ToolRegistry(
        builtin_tools(), roots=Roots.create(work), mcp_servers=(server,), mcp_ready_wait=120
    )
    try:
        notices = await registry.prepare()
        tool = registry.get("long__echo")
        assert tool is not None, notices
        output = await tool.run({"text": "still fine"}, registry.context())
    finally:
        await registry.aclose()
    assert notices == ["MCP server 'long' wrote 1 line of non-MCP output to its stdout (ignored)"]
    assert [c.text for c in output.content] == ["echo: still fine"]
    assert still_alive(wait_for_pids(pidfile), GONE_WITHIN) == []


@pytest.mark.parametrize("how", ["ctrl+q", "SIGTERM"])
def test_quitting_the_app_stops_a_server_that_never_answers(
    how: str, tmp_path: Path, programs: list[Program]
) -> None:
    from tests.e2e.test_pty import Pty

    config, pidfile = write_config(tmp_path, "hang")
    env = {**os.environ, "TERM": "xterm-256color", "LANG": "C.UTF-8"}
    pty = Pty(
        tangents_command()
        + ["--db", str(tmp_path / "t.db"), "--config", str(config), "-m", "demo"],
        env,
    )
    pids: list[int] = []
    try:
        pty.read_until(b"Message (enter sends")
        pty.write(b"hello")
        pty.read_until(b"hello")
        pty.write(b"\r")
        pids = wait_for_pids(pidfile)
        if how == "ctrl+q":
            pty.write(b"\x11")
        else:
            pty.process.send_signal(signal.SIGTERM)
        try:
            pty.wait(EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the app did not exit after {how}") from None
        assert b"Traceback" not in bytes(pty.output)
        assert still_alive(pids, GONE_WITHIN) == []
    finally:
        pty.close()
        kill_quietly(pids)
