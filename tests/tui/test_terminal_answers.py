"""The terminal is asked about images once, before Textual takes it
(tui/terminal_answers.py): its answers are read, keys typed meanwhile kept in
order, on a real pseudo-terminal; textual-image is told the answers and asks
nothing."""

from __future__ import annotations

import fcntl
import os
import select
import struct
import subprocess
import sys
import termios
import threading
import tty
from pathlib import Path

import pytest
from textual import events

from tests.tui.helpers import running, settle
from tui import terminal_answers
from tui.terminal_answers import KITTY_GRAPHICS, QUESTIONS, AnswerReader, Graphics, questions_for
from tui.widgets.prompt_input import PromptInput

DA1 = b"\x1b[?1;2c"
KITTY_OK = b"\x1b_Gi=31;OK\x1b\\"


@pytest.fixture
def terminal():
    """A pseudo-terminal in cbreak mode (as while the terminal is asked):
    (the program's side, the terminal's side)."""
    terminal_side, program_side = os.openpty()
    tty.setcbreak(program_side)
    yield program_side, terminal_side
    os.close(program_side)
    os.close(terminal_side)


def answering(term: int, *writes: bytes) -> tuple[threading.Thread, list[bytes]]:
    """The terminal's side: reads the questions, then writes ``writes`` one by one."""
    asked: list[bytes] = []

    def answer() -> None:
        select.select([term], [], [], 10)
        asked.append(os.read(term, 1024))
        for data in writes:
            os.write(term, data)

    thread = threading.Thread(target=answer)
    thread.start()
    return thread, asked


def test_answers_are_read_and_keys_kept_in_order(terminal) -> None:
    program, term = terminal
    reader = AnswerReader(program, program)
    thread, asked = answering(
        term,
        b"he" + KITTY_OK[:4],  # keys, then an answer cut in two
        KITTY_OK[4:] + b"llo\x1b[A",  # its rest, keys, an arrow key
        b"\x1b[6;18;9t world" + DA1,  # the cell size, keys, the last answer
    )
    reader.ask(QUESTIONS, timeout=10)
    thread.join(10)
    assert asked == [QUESTIONS]
    assert reader.graphics == Graphics(sixel=False, kitty=True, cell_size=(9, 18))
    assert reader.finish() == b"hello\x1b[A world"


def test_the_reading_ends_with_the_device_attributes_answer(terminal) -> None:
    """A terminal answers in order: once the last question (DA1) is answered,
    no other answer is coming, and no time limit is waited out (a terminal that
    does not speak kitty's protocol never answers that question)."""
    program, term = terminal
    reader = AnswerReader(program, program)
    thread, _ = answering(term, b"\x1b[?62;4;22c")
    asking = threading.Thread(target=reader.ask, args=(QUESTIONS, 600.0))
    asking.start()
    asking.join(30)
    thread.join(10)
    assert not asking.is_alive()
    assert reader.graphics == Graphics(sixel=True, kitty=False, cell_size=None)


def test_a_terminal_that_does_not_answer_is_given_up_on_and_keys_kept(terminal) -> None:
    """An unfinished escape sequence at the end is a key (Esc)."""
    program, term = terminal
    reader = AnswerReader(program, program)
    thread, _ = answering(term)  # reads the questions, answers none
    # Typed before the questions: there when the reader looks, however late a
    # loaded machine runs the terminal's thread (answered after the questions,
    # they could come after the reader gave up).
    os.write(term, b"x\x1b")
    reader.ask(QUESTIONS, timeout=0.2)
    thread.join(10)
    assert reader.graphics == Graphics()
    assert reader.finish() == b"x\x1b"


def test_the_cell_size_is_cached_for_textual_image_without_asking_again(monkeypatch) -> None:
    """The terminal's answer when it gives no pixel size; without an answer
    textual-image's own fallback (VT340's cell), and no question written."""
    import textual_image._terminal as terminal

    monkeypatch.setattr(terminal, "get_tiocgwinsz", lambda: (40, 120, 0, 0))
    # The cache is put back as it was after the test (images elsewhere read it).
    monkeypatch.setattr(terminal.get_cell_size, "_result", None, raising=False)
    del terminal.get_cell_size._result
    terminal_answers._cache_cell_size((9, 18))
    assert terminal.get_cell_size() == terminal.CellSize(9, 18)
    del terminal.get_cell_size._result
    monkeypatch.setattr(terminal, "capture_mode", None)  # asking the terminal would fail
    with terminal_answers.questions_unasked():
        terminal_answers._cache_cell_size(None)
    assert terminal.get_cell_size() == terminal.CellSize(10, 20)


@pytest.mark.parametrize(
    "graphics, expected",
    [
        (Graphics(sixel=True, kitty=True, cell_size=(9, 18)), "SixelImage widget 9x18"),
        (Graphics(kitty=True, cell_size=(7, 15)), "TGPImage auto 7x15"),
        (Graphics(), "HalfcellImage auto 10x20"),
    ],
)
def test_textual_image_draws_with_what_the_terminal_answered_and_asks_nothing(
    graphics, expected
) -> None:
    """Imported on a terminal (in a fresh interpreter), after the answers: its
    images use the protocol they named, at their cell size, and nothing is
    written to the terminal (a question would be answered into the app's input)."""
    code = f"""
import sys
from tui import terminal_answers
from tui.terminal_answers import Graphics
terminal_answers._graphics = {graphics!r}
widget = terminal_answers.textual_image_widgets()
import textual_image.renderable as renderable
from textual_image._terminal import get_cell_size
size = get_cell_size()
kinds = ("SixelImage", "TGPImage", "HalfcellImage", "UnicodeImage")
drawn = next(kind for kind in kinds if renderable.Image is getattr(renderable, kind))
sixel = widget.Image is widget.SixelImage  # Sixel has a widget of its own
print("PICKED", drawn, "widget" if sixel else "auto", f"{{size.width}}x{{size.height}}", file=sys.stderr)
"""
    term, program = os.openpty()
    fcntl.ioctl(program, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))  # no pixel size
    try:
        result = subprocess.run(
            [sys.executable, "-c", code],
            stdin=program,
            stdout=program,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            cwd=Path(__file__).resolve().parents[2],
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert f"PICKED {expected}" in result.stderr
        written, _, _ = select.select([term], [], [], 0)
        assert not written, os.read(term, 1024)
    finally:
        os.close(program)
        os.close(term)


async def test_keys_typed_before_the_first_screen_are_typed_in_order(monkeypatch) -> None:
    """Kept keys come before the first key read after them, into the input
    (which nothing has focused yet when they come)."""
    monkeypatch.setattr(terminal_answers, "_typed", bytearray(b"hello"))
    async with running() as pilot:
        prompt = pilot.app.screen.query_one(PromptInput)
        pilot.app.screen.set_focus(None)
        pilot.app.post_message(events.Key(" ", " "))
        await settle(pilot)
        assert prompt.text == "hello "
        assert terminal_answers.typed_ahead() == ""


def test_the_kitty_query_is_asked_only_outside_a_multiplexer() -> None:
    """tmux and screen would show the query as the pane's title; elsewhere it is asked."""
    assert questions_for({"TERM": "xterm-kitty"}) == QUESTIONS
    for env in ({"TMUX": "/tmp/tmux-0/default,1,0"}, {"STY": "1234.pts-0.host"}):
        asked = questions_for(env)
        assert KITTY_GRAPHICS not in asked and asked.endswith(b"\x1b[c")
