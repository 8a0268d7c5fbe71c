"""Make untrusted text safe to show in a terminal, and keep secrets out of it.

Textual passes control sequences in widget text straight to the terminal, so
every string from a model, a tool, a file or a provider error goes through
:func:`strip_control` (the one sanitiser) before it is shown: by the TUI, print
mode, the ``sessions`` commands and exports written to a terminal.
:class:`StreamCleaner` applies it to text that arrives in pieces, and
:func:`json_for_terminal` writes JSON whose strings cannot carry a control
character raw (their values stay exact).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

# ESC-introduced sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings
# (terminated by BEL or ST, or unterminated up to the end of the line), and
# two-character escapes. Then the 8-bit C1 forms of the same.
_STRING_END = r"(?:\x07|\x1b\\|\x9c|(?=\n)|$)"
_ESCAPES = re.compile(
    rf"""
    \x1b\[[0-?]*[ -/]*[@-~]?                  # CSI
  | \x1b[\]PX^_][^\n]*?{_STRING_END}           # OSC, DCS, SOS, PM, APC
  | \x1b[ -/]*[0-~]?                          # other ESC sequences (incl. lone ESC)
  | \x9b[0-?]*[ -/]*[@-~]?                    # 8-bit CSI
  | [\x90\x98\x9d\x9e\x9f][^\n]*?{_STRING_END} # 8-bit DCS, SOS, OSC, PM, APC
    """,
    re.VERBOSE,
)
_ESCAPE_STARTS = "\x1b\x9b\x90\x98\x9d\x9e\x9f"
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LONE_CR = re.compile(r"\r(?!\n)")
_SURROGATES = re.compile(r"[\ud800-\udfff]")
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Embeddings, overrides and isolates: invisible, and they reorder what follows
(Trojan Source). The marks U+200E, U+200F and U+061C only nudge neighbouring
punctuation and are common in right-to-left text, so they are left alone."""
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
# Anything the passes below would change: most text has none, and is returned after one scan.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}]")
# Characters a JSON writer with ensure_ascii=False leaves raw but a terminal obeys.
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}]")


def bidi_marker(char: str) -> str:
    """The visible stand-in for a bidi control: ``⟨U+202E⟩``."""
    return f"\u27e8U+{ord(char):04X}\u27e9"


def strip_control(text: str) -> str:
    """Text safe for a terminal, with everything readable kept.

    Escape sequences (CSI, OSC, DCS, ... in 7- and 8-bit form) are removed
    whole; ``\\r\\n`` becomes ``\\n`` and a lone ``\\r`` becomes ``\\n`` too (so
    ``rm -rf ~\\rls -la`` shows both commands, not just the second); every other
    C0 character but tab and newline, DEL and C1 are dropped; bidi controls
    become visible markers (:func:`bidi_marker`); lone surrogates (which no
    terminal encoding can write) become U+FFFD.
    """
    if not text or not _UNSAFE.search(text):
        return text
    text = _ESCAPES.sub("", text)
    text = _LONE_CR.sub("\n", text).replace("\r\n", "\n")
    text = _CONTROLS.sub("", text)
    text = _SURROGATES.sub("\ufffd", text)
    return _BIDI.sub(lambda match: bidi_marker(match.group()), text)


def _incomplete_escape(tail: str) -> bool:
    """Is ``tail`` (starting at an escape introducer) an unfinished control sequence?"""
    if tail == "\x1b" or (tail[0] == "\x1b" and all(" " <= c <= "/" for c in tail[1:])):
        return True
    if tail.startswith("\x1b[") or tail.startswith("\x9b"):
        body = tail[2:] if tail.startswith("\x1b[") else tail[1:]
        return not any("@" <= char <= "~" for char in body)
    if (
        tail[:2] in ("\x1b]", "\x1bP", "\x1bX", "\x1b^", "\x1b_")
        or tail[0] in "\x90\x98\x9d\x9e\x9f"
    ):
        return not any(end in tail for end in ("\x07", "\x1b\\", "\x9c", "\n"))
    return False


def _unfinished_escape(text: str) -> int:
    """Where an escape sequence that ``text`` does not finish starts; -1 if none.
    Sequences are walked in order, so an unterminated OSC swallows the
    introducers after it, as :func:`strip_control` would."""
    position = 0
    while True:
        found = [i for i in (text.find(c, position) for c in _ESCAPE_STARTS) if i != -1]
        if not found:
            return -1
        start = min(found)
        if _incomplete_escape(text[start:]):
            return start
        match = _ESCAPES.match(text, start)
        position = match.end() if match is not None and match.end() > start else start + 1


class StreamCleaner:
    """:func:`strip_control` for text that arrives in pieces (a streamed reply).

    An escape sequence or a ``\\r\\n`` split across two pieces is held back
    until the next piece shows how it ends (an escape at most
    :attr:`MAX_CARRY` characters long), so the joined output equals
    ``strip_control`` of the joined input.
    """

    MAX_CARRY = 256

    def __init__(self) -> None:
        self._carry = ""

    def feed(self, text: str) -> str:
        """The clean text that can be shown now."""
        text = self._carry + text
        self._carry = ""
        start = _unfinished_escape(text)
        if start != -1 and len(text) - start <= self.MAX_CARRY:
            text, self._carry = text[:start], text[start:]
        elif text.endswith("\r"):
            text, self._carry = text[:-1], "\r"
        return strip_control(text)

    def flush(self) -> str:
        """Whatever was held back, once no more text will come."""
        text, self._carry = self._carry, ""
        return strip_control(text)


def json_for_terminal(document: Any, indent: int | None = 2) -> str:
    """``document`` as JSON (non-ASCII kept readable) in which no string can
    move the cursor or reorder text. ``json.dumps`` escapes C0 (ESC included);
    DEL, C1, bidi controls and lone surrogates, which it leaves raw, are
    written as ``\\uXXXX`` escapes too, so the values parse back exactly."""
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


_SECRET_ENV_HINTS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_KEY_PATTERNS = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{20,}|Bearer\s+[A-Za-z0-9._\-]{8,})"
)


def known_secrets(extra: tuple[str, ...] = ()) -> list[str]:
    """Secret values from the environment (names containing KEY/TOKEN/...), longest first."""
    values = [
        value
        for name, value in os.environ.items()
        if any(hint in name.upper() for hint in _SECRET_ENV_HINTS) and len(value) >= 8
    ]
    values.extend(s for s in extra if s and len(s) >= 8)
    return sorted(set(values), key=len, reverse=True)


def redact(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """Replace every known secret and anything shaped like an API key with ``[redacted]``."""
    for secret in known_secrets(extra_secrets):
        text = text.replace(secret, "[redacted]")
    return _KEY_PATTERNS.sub("[redacted]", text)


FRAGMENT = 6
"""The shortest run of a key's characters :func:`redact_fragments` hides."""


def redact_fragments(text: str, keys: Iterable[str]) -> str:
    """``text`` with every run of :data:`FRAGMENT` or more characters that also
    occurs in one of ``keys`` replaced by ``[redacted]``: a server that quotes
    the start of the key it was sent (``sk-proj-abc12***``) gives none of it away."""
    covered = bytearray(len(text))
    for key in keys:
        for start in range(len(key) - FRAGMENT + 1):
            piece = key[start : start + FRAGMENT]
            at = text.find(piece)
            while at != -1:
                covered[at : at + FRAGMENT] = b"\x01" * FRAGMENT
                at = text.find(piece, at + 1)
    if not any(covered):
        return text
    runs = re.finditer(rb"\x01+", bytes(covered))
    out, end = [], 0
    for run in runs:
        out += [text[end : run.start()], "[redacted]"]
        end = run.end()
    return "".join([*out, text[end:]])


def safe_display(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """Both: no secrets, no control sequences."""
    return strip_control(redact(text, extra_secrets))
