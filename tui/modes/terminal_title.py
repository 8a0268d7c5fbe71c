"""The terminal's title as it was before the app: saved on the terminal's own
title stack at launch (XTWINOPS ``CSI 22 ; 0 t``) and restored from it at exit
(``CSI 23 ; 0 t``), whatever changed it meanwhile (tmux once took the image
probe's question for a title). Terminals without a title stack ignore both."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

SAVE = "\x1b[22;0t"
RESTORE = "\x1b[23;0t"


@contextmanager
def title_kept() -> Iterator[None]:
    out = sys.__stdout__
    if out is None or not out.isatty():
        yield
        return
    _write(out, SAVE)
    try:
        yield
    finally:
        _write(out, RESTORE)


def _write(out, sequence: str) -> None:
    try:
        out.write(sequence)
        out.flush()
    except OSError:
        pass  # the terminal is gone: nothing to restore
