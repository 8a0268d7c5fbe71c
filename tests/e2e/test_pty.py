"""The exact bytes the app writes to its terminal, read from a raw pseudo-terminal:
escape sequences in a model's reply must never reach the terminal."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import termios
import time

import pytest
from fake_provider import Reply

from tests.e2e.conftest import tangents_program

pytestmark = pytest.mark.slow

MALICIOUS = (
    "Before. "
    "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: write to the clipboard
    "\x1b]8;;https://evil.example/\x07click me\x1b]8;;\x07 "  # OSC 8: a hyperlink
    "\x1b]0;pwned-title\x07"  # OSC 0: window title
    "\x1b]2;pwned-title-2\x1b\\"  # OSC 2, ST-terminated
    "\x9d0;pwned-8bit\x9c"  # 8-bit OSC
    "\x1bP+q696e646e\x1b\\"  # DCS request
    "\x1b[2J\x1b[?1049l"  # clear the screen, leave the alternate screen
    " After the attack."
)


class Pty:
    """A program on a pseudo-terminal of a fixed size; everything it writes is kept."""

    def __init__(
        self, command: list[str], env: dict[str, str], cols: int = 120, rows: int = 40
    ) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.process = subprocess.Popen(
            command,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.output = bytearray()

    def read_until(self, marker: bytes, timeout: float = 30.0, *, since: int = 0) -> None:
        """Read until ``marker`` is in what was written from offset ``since`` on."""
        deadline = time.monotonic() + timeout
        while marker not in self.output[since:]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"{marker!r} not written; the tail of the output: {bytes(self.output[-2000:])!r}"
                )
            if not self._read(min(remaining, 0.2)):
                break

    def read_until_quiet(self, quiet: float = 0.5, timeout: float = 30.0) -> None:
        """Read until nothing more is written for ``quiet`` seconds (repaints
        that come after what was waited for: a reply's finish)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            written = len(self.output)
            if not self._read(quiet) or len(self.output) == written:
                return
        raise AssertionError(f"still writing after {timeout} s")

    def type_then_enter(self, text: bytes) -> None:
        """Type ``text``, and press Enter once its echo is written (a key
        typed is echoed before the next is sent, as a person types)."""
        since = len(self.output)
        self.write(text)
        self.read_until(text, since=since)
        self.write(b"\r")

    def _read(self, timeout: float) -> bool:
        """Keep what the program wrote within ``timeout``; False once the terminal is closed."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            return False
        self.output += chunk
        return bool(chunk)

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def wait(self, timeout: float) -> int:
        """Wait for the program to exit, reading what it writes meanwhile (as a
        terminal does: a program whose terminal is not read blocks writing)."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(self.process.args, timeout)
            if not self._read(min(remaining, 0.2)):
                return self.process.wait(remaining)
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        os.close(self.master)


def osc_sequences(data: bytes) -> list[bytes]:
    """Every OSC the program wrote: ``ESC ]`` or the 8-bit ``0x9d`` (as UTF-8 it is ``c2 9d``)."""
    return re.findall(rb"(?:\x1b\]|\xc2\x9d)[^\x07\x1b]*", data)


def test_escape_sequences_in_a_reply_never_reach_the_terminal(fake_provider, app_env) -> None:
    fake_provider.script(Reply(text=MALICIOUS, chunk_size=7))
    pty = Pty(
        [tangents_program(), "--model", "openai/x", "--api-base", f"{fake_provider.base_url}/v1"],
        app_env,
    )
    try:
        pty.read_until(b"Message (enter sends")
        before_reply = len(pty.output)
        pty.type_then_enter(b"hi")
        pty.read_until(b"After")
        pty.read_until(b"attack.")
        pty.read_until_quiet()  # any late repaint of the reply
        written = bytes(pty.output[before_reply:])
    finally:
        pty.close()

    for forbidden in (
        b"\x1b]52",
        b"\x1b]8;",
        b"\x1b]0;",
        b"\x1b]2;",
        b"\x1bP",
        b"\xc2\x9d",
        b"\x1b[2J",
        b"\x1b[?1049l",
    ):
        assert forbidden not in written, forbidden
    assert b"pwned" not in written and b"evil.example" not in written
    assert osc_sequences(written) == [], "the app itself writes no OSC while answering"
    assert b"Before." in written and b"click me" in written
