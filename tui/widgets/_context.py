"""What the chat view hands down to the widgets it builds."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from textual.color import Color

from core.sessions.persistence import Blob
from tui import keymap

BlobLoader = Callable[[str], Awaitable["Blob | None"]]
"""Loads a blob's bytes by sha256 (``None`` when it is missing)."""

ImageMode = Literal["auto", "halfcell", "unicode", "none"]
"""How images are drawn: the best protocol the terminal supports (``auto``),
coloured half blocks, unicode blocks, or not at all (caption only)."""


@dataclass(frozen=True)
class BranchInfo:
    """Where a message stands among its alternatives, and its label."""

    index: int
    """0-based, oldest first (shown as ``index + 1``)."""
    count: int
    label: str | None = None


BranchInfoLookup = Callable[[str], "BranchInfo | None"]
"""The branch info of an entry id (``None``: nothing to show)."""


ContextNoteLookup = Callable[[str], "str | None"]
"""What an entry's row says about how the model sees it (shortened, left
out), by entry id; ``None``: it is sent as it is."""


@dataclass(frozen=True)
class ViewContext:
    blob_loader: BlobLoader | None = None
    image_mode: ImageMode = "auto"
    branch_info: BranchInfoLookup | None = None
    context_note: ContextNoteLookup | None = None
    opener: str | None = None
    """The command that opens an attached file (None: the system's)."""
    retry_key: str = field(default_factory=lambda: keymap.first_key("retry"))
    """The key named in a failed reply's hint (the config's keymap applied)."""
    agent_colors: Mapping[str, Color] = field(default_factory=dict)
    """Round-table agents' colours by name casefolded (:mod:`tui.agent_colors`)."""

    @property
    def retry_hint(self) -> str:
        return f"press {self.retry_key} to retry"
