"""Keys typed while the terminal is asked about images are kept (tui/terminal_answers.py):
its answers go to textual-image, keys to the app, in order, on a real pseudo-terminal."""

from __future__ import annotations

import os
import select
import threading
import tty

import pytest
from textual import events

from tests.tui.helpers import running, settle
from tui import terminal_answers
from tui.terminal_answers import AnswerReader
from tui.widgets.prompt_input import PromptInput

DA1 = b"\x1b[?1;2c"


@pytest.fixture
def terminal():
    """A pseudo-terminal in cbreak mode (as while the terminal is asked):
    (the program's side, the terminal's side)."""
    terminal_side, program_side = os.openpty()
    tty.setcbreak(program_side)
    yield program_side, terminal_side
    os.close(program_side)
    os.close(terminal_side)


def test_answers_go_to_the_reader_and_keys_are_kept_in_order(terminal) -> None:
    program, term = terminal
    reader = AnswerReader(program, program)
    os.write(term, b"he" + DA1[:3])  # keys, then an answer cut in two
    os.write(term, DA1[3:] + b"llo\x1b[A")  # its rest, keys, an arrow key
    os.write(term, b"\x1b_Gi=31;OK\x1b\\ world")
    answers = "".join(reader.read(program, 1, 1.0) for _ in range(len(DA1)))
    assert answers == DA1.decode()
    assert reader.read(program, 64, 1.0) == "\x1b_Gi=31;OK\x1b\\"
    with pytest.raises(TimeoutError):
        reader.read(program, 1, 0.05)
    assert reader.finish() == b"hello\x1b[A world"


def test_an_unfinished_escape_at_the_end_is_a_key(terminal) -> None:
    program, term = terminal
    reader = AnswerReader(program, program)
    os.write(term, b"x\x1b")
    with pytest.raises(TimeoutError):
        reader.read(program, 1, 0.05)
    assert reader.finish() == b"x\x1b"


def test_late_answers_are_read_until_the_last_question_is_answered(terminal) -> None:
    """The program asks the device attributes once more; the answers that were
    late (the first question's) and the new one are read and dropped, keys kept."""
    program, term = terminal
    reader = AnswerReader(program, program)

    asked: list[bytes] = []

    def answer() -> None:
        select.select([term], [], [], 5)
        asked.append(os.read(term, 64))
        # the late answer, keys, the cell size, the new answer
        os.write(term, DA1 + b"ab" + b"\x1b[6;18;9t" + DA1)

    answering = threading.Thread(target=answer)
    answering.start()
    reader.absorb_late_answers(timeout=5)
    answering.join()
    assert asked == [terminal_answers.CELL_SIZE + terminal_answers.DEVICE_ATTRIBUTES]
    assert reader.finish() == b"ab"
    assert reader.cell_size == (9, 18)


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
    terminal_answers._cache_cell_size(None)
    assert terminal.get_cell_size() == terminal.CellSize(10, 20)


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
