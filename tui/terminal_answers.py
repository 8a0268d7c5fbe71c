"""Keys typed while the terminal is asked about images are kept, not lost.

textual-image asks the terminal which image protocol it speaks (at its import)
and how large a cell is, and reads the answers from stdin a byte at a time
before Textual takes the terminal. A key typed meanwhile (the first words of a
first message, typed as the program starts) ended the read as an "unexpected
response" and was gone, and the answer then came after Textual had taken the
terminal: ``[?1;2c`` in the input. The cell size was asked later still, when
the chat view's modules loaded, with Textual reading the same terminal. Here
textual-image's reads go through :class:`AnswerReader`, which passes on answers
only and sets typed bytes aside; a last question every terminal answers (DA1),
asked with the cell size, collects the answers that came too late; the cell
size is cached for textual-image, and what was typed is given to the app
(:func:`typed_ahead`).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import sys
import termios
import threading
import time
import tty
from collections.abc import Iterator

ANSWER = re.compile(rb"\x1b\[\?[\d;]*c|\x1b\[[\d;]*t|\x1b_G[^\x1b]*\x1b\\")
"""The answers asked for: device attributes (DA1), the cell size, the graphics protocol's."""
_PARTIAL_ANSWER = re.compile(rb"\x1b(?:\[[\d;?]*|_(?:G[^\x1b]*\x1b?)?)?")
"""The start of an answer whose end has not been read yet."""
DEVICE_ATTRIBUTES = b"\x1b[c"
CELL_SIZE = b"\x1b[16t"
_CELL_SIZE_ANSWER = re.compile(rb"\x1b\[6;(\d+);(\d+)t")
LATE_ANSWERS_SECONDS = 0.3
"""How long the answer to the last question is waited for (terminals answer
questions in order, so once it is in, every earlier answer is)."""

_typed = bytearray()
_typed_lock = threading.Lock()


class AnswerReader:
    """Reads stdin (already in cbreak mode) for textual-image: answers go to it,
    anything else (keys) is kept in :attr:`typed`, in the order typed."""

    def __init__(self, fd: int, fd_out: int) -> None:
        self.fd, self.fd_out = fd, fd_out
        self.typed = bytearray()
        self._pending = b""
        self._answers = b""
        self.answers_seen: list[bytes] = []

    def read(self, fd: int, length: int, timeout: float | None = None) -> str:
        """``textual_image._terminal.read``: up to ``length`` bytes of answers,
        ``TimeoutError`` when none comes within ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._answers:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._fill(remaining):
                raise TimeoutError("Timeout waiting for data")
        taken, self._answers = self._answers[:length], self._answers[length:]
        return taken.decode(errors="replace")

    def absorb_late_answers(self, timeout: float = LATE_ANSWERS_SECONDS) -> None:
        """Ask the cell size, then the device attributes once more, and read until
        both answers to the latter are in (textual-image asks it once, for
        Sixel): every answer to an earlier question that came too late is read
        on the way, and dropped; the cell size is kept (:attr:`cell_size`)."""
        os.write(self.fd_out, CELL_SIZE + DEVICE_ATTRIBUTES)
        deadline = time.monotonic() + timeout
        while self._device_attribute_answers() < 2:
            if not self._fill(max(0.0, deadline - time.monotonic())):
                break
        self._answers = b""

    def _device_attribute_answers(self) -> int:
        return sum(answer.endswith(b"c") for answer in self.answers_seen)

    @property
    def cell_size(self) -> tuple[int, int] | None:
        """A cell's (width, height) in pixels, if the terminal said."""
        for answer in self.answers_seen:
            if found := _CELL_SIZE_ANSWER.fullmatch(answer):
                return int(found.group(2)), int(found.group(1))
        return None

    def finish(self) -> bytes:
        """Everything typed (an unfinished escape sequence is a key: Esc)."""
        self.typed += self._pending
        self._pending = b""
        return bytes(self.typed)

    def _fill(self, timeout: float | None) -> bool:
        readable, _, _ = select.select([self.fd], [], [], timeout)
        if not readable:
            return False
        data = os.read(self.fd, 1024)
        if not data:
            return False
        self._split(self._pending + data)
        return True

    def _split(self, data: bytes) -> None:
        start = 0
        for match in ANSWER.finditer(data):
            self.typed += data[start : match.start()]
            self._answers += match.group()
            self.answers_seen.append(match.group())
            start = match.end()
        rest = data[start:]
        escape = rest.rfind(b"\x1b")
        if escape >= 0 and _PARTIAL_ANSWER.fullmatch(rest[escape:]):
            self.typed += rest[:escape]
            self._pending = rest[escape:]
        else:
            self.typed += rest
            self._pending = b""


@contextlib.contextmanager
def keys_kept(fd: int, fd_out: int) -> Iterator[AnswerReader]:
    """Around textual-image's questions: the terminal (``fd``, ``fd_out``) in
    cbreak mode throughout, its reads through an :class:`AnswerReader`; late
    answers absorbed at the end and the keys typed kept for :func:`typed_ahead`."""
    import textual_image._terminal as terminal

    reader = AnswerReader(fd, fd_out)
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd, termios.TCSANOW)
    read, capture_mode = terminal.read, terminal.capture_mode
    terminal.read = reader.read
    terminal.capture_mode = contextlib.nullcontext
    try:
        yield reader
        reader.absorb_late_answers()
    finally:
        terminal.read, terminal.capture_mode = read, capture_mode
        termios.tcsetattr(fd, termios.TCSANOW, saved)
        with _typed_lock:
            _typed.extend(reader.finish())


def ask_terminal() -> None:
    """What textual-image asks at its import (the image protocol), and the cell
    size, with the keys typed meanwhile kept."""
    assert sys.__stdin__ is not None and sys.__stdout__ is not None
    with keys_kept(sys.__stdin__.fileno(), sys.__stdout__.fileno()) as reader:
        import textual_image.renderable  # noqa: F401  # asks which protocol
    _cache_cell_size(reader.cell_size)


def _cache_cell_size(answer: tuple[int, int] | None) -> None:
    """Fill textual-image's cell-size cache now. Left empty, it was filled when
    the chat view's modules loaded, after Textual had taken the terminal: its
    question's answer went to Textual, and a key typed then to textual-image
    (lost). Found as textual-image finds it (the terminal's pixel size, else
    the answer to CSI 16 t asked here, else its environment, else VT340's),
    without asking again."""
    import textual_image._terminal as terminal

    try:
        rows, columns, width, height = terminal.get_tiocgwinsz()
    except OSError:
        rows = columns = width = height = 0
    if answer is not None and not (rows and columns and width and height):
        terminal.get_cell_size._result = terminal.CellSize(*answer)  # type: ignore[attr-defined]
        return
    capture = terminal.capture_terminal_response
    terminal.capture_terminal_response = _NotAsked
    try:
        terminal.get_cell_size()
    finally:
        terminal.capture_terminal_response = capture


class _NotAsked:
    """In place of textual-image's question: the answer did not come."""

    def __init__(self, *_: object, **__: object) -> None:
        pass

    def __enter__(self) -> None:
        raise TimeoutError("asked with the device attributes, not answered")

    def __exit__(self, *_: object) -> None:
        return None


def typed_ahead() -> str:
    """The keys typed while the terminal was asked (once: later calls give "";
    called from the terminal's input thread and the app's)."""
    with _typed_lock:
        text = _typed.decode(errors="replace")
        _typed.clear()
    return text
