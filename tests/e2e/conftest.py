"""Running the real ``tangents`` program: in tmux, and in a raw pseudo-terminal."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

FAKE_KEY = "sk-test-0123456789abcdefghij"


def tangents_program() -> str:
    found = shutil.which("tangents") or str(Path(sys.executable).parent / "tangents")
    if not Path(found).exists():
        pytest.fail(
            "the tangents program is not installed: the README's test command installs it (pip install -e .)"
        )
    return found


class Tmux:
    """One tmux server of our own (``-L``), so tests never touch the user's or
    each other's sessions; everything it runs ends with :meth:`kill`."""

    def __init__(self, width: int = 120, height: int = 40) -> None:
        if shutil.which("tmux") is None:
            pytest.skip(
                "tmux is not installed (a system package pip cannot install); test_pty.py still drives the real program"
            )
        self.socket = f"tangents-test-{uuid.uuid4().hex[:10]}"
        self.name = "app"
        self.width = width
        self.height = height

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=check
        )

    def start(self, command: list[str], env: dict[str, str]) -> None:
        exported = " ".join(f"{k}={_quote(v)}" for k, v in env.items())
        # Under load tmux may start the command before the pane has its size,
        # and a program that starts then sees 80x24 (the resize comes too early
        # to be noticed): wait for the size first.
        wait = f'while [ "$(stty size 2>/dev/null)" != "{self.height} {self.width}" ]; do sleep 0.02; done'
        shell = f"{wait}; env {exported} {' '.join(_quote(c) for c in command)}; echo EXITED-$?; sleep 600"
        self._tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            shell,
        )

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.name, "-l", text)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def paste(self, text: str) -> None:
        """Paste ``text`` as a terminal does: bracketed, when the program asked for it."""
        self._tmux("set-buffer", "-b", "paste", text)
        self._tmux("paste-buffer", "-p", "-d", "-b", "paste", "-t", self.name)

    def program_pid(self) -> int:
        """The process the pane runs the command as (the pane's shell's only
        child: ``env`` replaces itself with the command)."""
        shell = self._tmux("display-message", "-p", "-t", self.name, "#{pane_pid}").stdout.strip()
        children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        [pid] = children
        return int(pid)

    def pane_title(self) -> str:
        return self._tmux("display-message", "-p", "-t", self.name, "#{pane_title}").stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name, check=False).stdout

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} did not appear; the pane shows:\n{screen}")
            time.sleep(0.1)

    def kill(self) -> None:
        self._tmux("kill-server", check=False)
        socket_file(self.socket).unlink(missing_ok=True)  # tmux leaves it behind


def socket_file(name: str) -> Path:
    """Where tmux keeps the socket of ``tmux -L name``."""
    return Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / name


def _quote(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    server = Tmux()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def app_env(tmp_path: Path) -> dict[str, str]:
    """The environment the program runs with: its own home, a made-up key."""
    return {
        "TANGENTS_HOME": os.environ["TANGENTS_HOME"],
        "HOME": os.environ["HOME"],
        "PATH": os.environ["PATH"],
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": FAKE_KEY,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        # The code under test, when it is not the installed copy (a worktree).
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
    }
