"""What the terminal answers about images, asked once at launch, with the keys
typed meanwhile kept, not lost.

Images are drawn with the best protocol the terminal speaks (Sixel, the kitty
graphics protocol, else half cells), at its cell size in pixels. textual-image
asks for these when first imported, a question at a time, reading the
answers from stdin before Textual takes the terminal; a terminal that does not
speak the kitty protocol never answers that question, and the import waited
out its 0.1 s. Here the three questions go in one write with the device
attributes (DA1, which every terminal answers, in order) last: once its answer
is in, every answer that will come is in (a few milliseconds in tmux). A key
typed meanwhile (the first words of a first message, typed as the program
starts) is set aside for the app (:func:`typed_ahead`), not taken for an
answer. textual-image is imported later, with the chat view, told these
answers (:func:`textual_image_widgets`): it asks nothing once Textual owns the
terminal, where its questions' answers would arrive as keys.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import sys
import termios
import threading
import time
import tty
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import ModuleType

ANSWER = re.compile(rb"\x1b\[\?[\d;]*c|\x1b\[[\d;]*t|\x1b_G[^\x1b]*\x1b\\")
"""The answers asked for: device attributes (DA1), the cell size, the graphics protocol's."""
_PARTIAL_ANSWER = re.compile(rb"\x1b(?:\[[\d;?]*|_(?:G[^\x1b]*\x1b?)?)?")
"""The start of an answer whose end has not been read yet."""
KITTY_GRAPHICS = b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\"
"""Does the terminal speak the kitty graphics protocol? (textual-image's query:
a 1x1 image, checked, not stored; "OK" if it does, no answer if it does not)."""
CELL_SIZE = b"\x1b[16t"
DEVICE_ATTRIBUTES = b"\x1b[c"
QUESTIONS = KITTY_GRAPHICS + CELL_SIZE + DEVICE_ATTRIBUTES
_MULTIPLEXERS = ("TMUX", "STY")
"""Set inside tmux and GNU screen, which take an APC (the kitty query) for the
pane's title and keep it after the program ends; neither shows kitty images."""
_CELL_SIZE_ANSWER = re.compile(rb"\x1b\[6;(\d+);(\d+)t")
_DEVICE_ATTRIBUTES_ANSWER = re.compile(rb"\x1b\[\?([\d;]*)c")
_KITTY_ANSWER = re.compile(rb"\x1b_G[^\x1b]*;OK\x1b\\")
ANSWERS_SECONDS = 0.3
"""How long the answer to the last question is waited for (a terminal that has
not answered by then gets images in half cells)."""


@dataclass(frozen=True)
class Graphics:
    """What the terminal said it can show."""

    sixel: bool = False
    kitty: bool = False
    cell_size: tuple[int, int] | None = None
    """A cell's (width, height) in pixels, if the terminal said."""


_graphics: Graphics | None = None
"""The terminal's answers, once asked (None: it was not asked, not a terminal)."""
_typed = bytearray()
_typed_lock = threading.Lock()
_textual_image_lock = threading.Lock()


class AnswerReader:
    """Reads the terminal's answers from stdin (already in cbreak mode) into
    :attr:`answers_seen`; anything else (keys) is kept in :attr:`typed`, in
    the order typed."""

    def __init__(self, fd: int, fd_out: int) -> None:
        self.fd, self.fd_out = fd, fd_out
        self.typed = bytearray()
        self._pending = b""
        self.answers_seen: list[bytes] = []

    def ask(self, questions: bytes, timeout: float = ANSWERS_SECONDS) -> None:
        """Write ``questions`` (the last one DA1) and read until its answer is in,
        or ``timeout`` seconds have passed."""
        os.write(self.fd_out, questions)
        deadline = time.monotonic() + timeout
        while not any(answer.endswith(b"c") for answer in self.answers_seen):
            if not self._fill(max(0.0, deadline - time.monotonic())):
                return

    @property
    def graphics(self) -> Graphics:
        """What the answers read say."""
        sixel = kitty = False
        for answer in self.answers_seen:
            if found := _DEVICE_ATTRIBUTES_ANSWER.fullmatch(answer):
                sixel = sixel or b"4" in found.group(1).split(b";")
            kitty = kitty or bool(_KITTY_ANSWER.fullmatch(answer))
        return Graphics(sixel=sixel, kitty=kitty, cell_size=self.cell_size)

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
    """The terminal (``fd``, ``fd_out``) in cbreak mode while it is asked, its
    reads through an :class:`AnswerReader`; the keys typed kept for
    :func:`typed_ahead`."""
    reader = AnswerReader(fd, fd_out)
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd, termios.TCSANOW)
    try:
        yield reader
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)
        with _typed_lock:
            _typed.extend(reader.finish())


def questions_for(environ: Mapping[str, str]) -> bytes:
    """The questions to ask: without the kitty query inside a multiplexer,
    where it would become the title (Sixel and the cell size are still asked)."""
    if any(environ.get(name) for name in _MULTIPLEXERS):
        return CELL_SIZE + DEVICE_ATTRIBUTES
    return QUESTIONS


def ask_terminal() -> None:
    """Ask the terminal which image protocols it speaks and its cell size, with
    the keys typed meanwhile kept (before Textual takes the terminal)."""
    global _graphics
    assert sys.__stdin__ is not None and sys.__stdout__ is not None
    with keys_kept(sys.__stdin__.fileno(), sys.__stdout__.fileno()) as reader:
        reader.ask(questions_for(os.environ))
    _graphics = reader.graphics


def textual_image_widgets() -> ModuleType:
    """``textual_image.widget``, its best protocol the one the terminal named
    when asked at launch (Sixel first, then kitty's, as textual-image ranks
    them; else half cells) and its cell size that answer's: textual-image
    asks the terminal nothing. Off a terminal (a screenshot, a headless run)
    half cells too, not textual-image's grey shade characters: they are
    coloured cells Textual draws wherever it draws, as a terminal shows them."""
    with _textual_image_lock:  # two images decoded at once: one import, told once
        return _textual_image_widgets()


def _textual_image_widgets() -> ModuleType:
    if "textual_image.widget" in sys.modules:
        return sys.modules["textual_image.widget"]
    # Without an answer textual-image falls back to VT340's cell size, and logs
    # a warning with a traceback, which Python's last-resort handler would
    # print on the terminal under the app.
    logging.getLogger("textual_image").addHandler(logging.NullHandler())
    with questions_unasked():
        import textual_image.renderable as renderable

        graphics = _graphics or Graphics()
        if renderable.is_tty and graphics.sixel:
            renderable.Image = renderable.SixelImage
        elif renderable.is_tty and graphics.kitty:
            renderable.Image = renderable.TGPImage
        else:
            renderable.Image = renderable.HalfcellImage
        _cache_cell_size(graphics.cell_size)
        import textual_image.widget as widget
    return widget


@contextlib.contextmanager
def questions_unasked() -> Iterator[None]:
    """textual-image's questions to the terminal go unanswered, unasked."""
    import textual_image._terminal as terminal

    capture = terminal.capture_terminal_response
    # A class in place of the function: called the same way, it never answers.
    terminal.capture_terminal_response = _NotAsked  # type: ignore[assignment]
    try:
        yield
    finally:
        terminal.capture_terminal_response = capture


def _cache_cell_size(answer: tuple[int, int] | None) -> None:
    """Fill textual-image's cell-size cache, as textual-image fills it (the
    terminal's pixel size, else the answer to CSI 16 t asked at launch, else
    its environment, else VT340's), its questions unasked (the caller's
    :func:`questions_unasked`): left empty, it is filled by a question whose
    answer would come to Textual's input as keys."""
    import textual_image._terminal as terminal

    try:
        rows, columns, width, height = terminal.get_tiocgwinsz()
    except OSError:
        rows = columns = width = height = 0
    if answer is not None and not (rows and columns and width and height):
        terminal.get_cell_size._result = terminal.CellSize(*answer)  # type: ignore[attr-defined]
        return
    terminal.get_cell_size()


class _NotAsked:
    """In place of textual-image's question: the answer did not come (the
    question was asked at launch, or could not be)."""

    def __init__(self, *_: object, **__: object) -> None:
        pass

    def __enter__(self) -> None:
        raise TimeoutError("asked at launch, not again")

    def __exit__(self, *_: object) -> None:
        return None


def typed_ahead() -> str:
    """The keys typed while the terminal was asked (once: later calls give "";
    called from the terminal's input thread and the app's)."""
    with _typed_lock:
        text = _typed.decode(errors="replace")
        _typed.clear()
    return text
