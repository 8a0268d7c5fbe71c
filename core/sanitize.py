"""Make untrusted text safe to show in a terminal, and keep secrets out of it.

Textual passes control sequences in widget text straight to the terminal, so
every string from a model, a tool, a file or a provider error goes through
:func:`strip_control` before display.
"""

from __future__ import annotations

import os
import re

# ESC-introduced sequences: CSI (ESC [ ... final), OSC/DCS/SOS/PM/APC strings
# (terminated by BEL or ST), and two-character escapes. Then the 8-bit C1 forms,
# then any remaining C0/C1 control character except tab and newline.
_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]?             # CSI
  | \x1b[\]PX^_].*?(?:\x07|\x1b\\|\x9c|$) # OSC, DCS, SOS, PM, APC
  | \x1b[ -/]*[0-~]?                     # other ESC sequences (incl. lone ESC)
  | \x9b[0-?]*[ -/]*[@-~]?               # 8-bit CSI
  | [\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x9c|$) # 8-bit DCS, SOS, OSC, PM, APC
    """,
    re.VERBOSE | re.DOTALL,
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def strip_control(text: str) -> str:
    """Remove terminal control sequences and control characters.

    Keeps tab and newline; turns ``\\r\\n`` into ``\\n`` and drops lone ``\\r``.
    """
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    text = _ESCAPES.sub("", text)
    return _CONTROLS.sub("", text)


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


def safe_display(text: str, extra_secrets: tuple[str, ...] = ()) -> str:
    """Both: no secrets, no control sequences."""
    return strip_control(redact(text, extra_secrets))
