"""A lone carriage return, C1 controls and bidi overrides from a model reach
the terminal neither from print mode, nor from a Markdown export, nor from the
TUI: read as the exact bytes written to a raw pseudo-terminal."""

from __future__ import annotations

import re

import pytest
from fake_provider import Reply

from tests.e2e.conftest import tangents_program
from tests.e2e.test_pty import Pty

pytestmark = pytest.mark.slow

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = (
    "Start: rm -rf ~\rls -la; access\u202e\u2066 level\u2069\u202c; c1\x9b2J\x85\x9d0;t\x9c Finish."
)


END_OF_OUTPUT = b"\x00"
"""Never written: reading stops when the program closes the terminal."""


def leaks(written: bytes) -> list[str]:
    """Bidi controls and C1 characters (as UTF-8), and lone carriage returns
    (the pty turns every newline into CR LF)."""
    text = written.decode("utf-8", "replace")
    found = [f"U+{ord(c):04X}" for c in text if 0x80 <= ord(c) <= 0x9F or c in BIDI]
    return found + (["lone CR"] if re.search("\r(?![\n])", text) else [])


def run_to_end(command: list[str], env: dict[str, str]) -> bytes:
    """Everything the program writes until it closes the terminal, and exits."""
    pty = Pty(command, env)
    try:
        pty.read_until(END_OF_OUTPUT, timeout=60)
        assert pty.process.wait(30) == 0, bytes(pty.output)
        return bytes(pty.output)
    finally:
        pty.close()


def test_print_mode_and_a_markdown_export_on_a_terminal(fake_provider, app_env, tmp_path) -> None:
    fake_provider.script(Reply(text=HOSTILE, chunk_size=3))
    db = str(tmp_path / "t.db")
    base = [tangents_program(), "--db", db]
    printed = run_to_end(
        [*base, "--model", "openai/x", "--api-base", f"{fake_provider.base_url}/v1", "-p", "hi"],
        app_env,
    )
    assert leaks(printed) == [], printed
    assert "rm -rf ~\r\nls -la; access⟨U+202E⟩⟨U+2066⟩ level".encode() in printed

    listed = run_to_end([*base, "sessions", "list"], app_env)
    session_id = listed.split()[0].decode()
    exported = run_to_end([*base, "sessions", "export", session_id, "-f", "markdown"], app_env)
    assert leaks(exported) == [], exported
    assert b"rm -rf ~\r\nls -la" in exported


def test_the_tui_shows_markers_not_controls(fake_provider, app_env) -> None:
    fake_provider.script(Reply(text=HOSTILE, chunk_size=5))
    pty = Pty(
        [tangents_program(), "--model", "openai/x", "--api-base", f"{fake_provider.base_url}/v1"],
        app_env,
    )
    try:
        pty.read_until(b"Message (enter sends")
        before_reply = len(pty.output)
        pty.type_then_enter(b"hi")
        pty.read_until(b"Finish.")
        written = bytes(pty.output[before_reply:])
    finally:
        pty.close()
    text = written.decode("utf-8", "replace")
    assert [c for c in text if 0x80 <= ord(c) <= 0x9F or c in BIDI] == []
    assert "rm -rf ~" in text and "ls -la" in text and "⟨U+202E⟩" in text
