"""The status line under the input: model, thinking level, context use (yellow
over 70% of the window, red over 90%), tokens and cost of the current branch
and of the whole session, the state of the syncs, and the two keys worth
knowing."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from core.sanitize import strip_control
from tui.models import model_label


@dataclass(frozen=True)
class FooterState:
    model: str = ""
    thinking: str = "off"
    context_tokens: int | None = None
    window: int | None = None
    window_guessed: bool = False
    """Nothing says the model's window: ``window`` is a conservative guess."""
    context_estimated: bool = False
    """The server reported no usage: ``context_tokens`` is counted here (``~``)."""
    tokens: int = 0
    cost: float = 0.0
    tokens_estimated: bool = False
    """Some of ``tokens`` were counted here, the server said none (``~``)."""
    session_tokens: int | None = None
    """Every branch; None while unknown."""
    session_cost: float = 0.0
    session_estimated: bool = False
    hint: str = ""
    """Right-aligned key hints, e.g. ``F1 help · ctrl+p commands``."""
    keys: str = ""
    """While a message is focused: its keys, shown instead of everything else."""
    sync: str = ""
    """``syncing…``, ``synced 3 min ago`` or why the last sync failed; ``""``: no syncs."""


def format_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        value = count / 1000
        return f"{value:.1f}k" if value < 10 else f"{value:.0f}k"
    value = count / 1_000_000
    return f"{value:.1f}M".replace(".0M", "M")


def format_cost(cost: float) -> str:
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


WARNING_SHARE = 0.70
ERROR_SHARE = 0.90
"""Shares of the window above which the context is shown as a warning, an error."""


def context_level(used: int | None, window: int | None) -> str:
    """``""``, ``"warning"`` (over 70% of the window) or ``"error"`` (over 90%)."""
    if not used or not window:
        return ""
    share = used / window
    return "error" if share > ERROR_SHARE else "warning" if share > WARNING_SHARE else ""


def totals_text(state: FooterState) -> str:
    """``12k tok · $0.0400``; with other branches, ``branch 12k tok $0.0400 · session 40k $0.1200``;
    ``~`` before a figure that holds an estimate."""
    tokens = counted(state.tokens, state.tokens_estimated)
    cost = format_cost(state.cost)
    if state.session_tokens is None:
        return f"{tokens} tok · {cost}"
    session_tokens, session_cost = (
        counted(state.session_tokens, state.session_estimated),
        format_cost(state.session_cost),
    )
    if (session_tokens, session_cost) == (tokens, cost):
        return f"{tokens} tok · {cost}"
    return f"branch {tokens} tok {cost} · session {session_tokens} {session_cost}"


def short_totals_text(state: FooterState) -> str:
    """The current branch's totals only: ``12k tok · $0.0400``."""
    return f"{counted(state.tokens, state.tokens_estimated)} tok · {format_cost(state.cost)}"


def counted(tokens: int, estimated: bool) -> str:
    """``1.2k``, or ``~1.2k`` when the figure holds an estimate."""
    return ("~" if estimated and tokens else "") + format_tokens(tokens)


def fit_hints(hints: str, width: int, more: str = "") -> str:
    """``a · b · c · last`` cut to ``width`` by leaving out hints before the last one
    (one line: a footer that grew would move the chat under the mouse); when some
    are left out, ``more`` (where to find them) goes before the last."""
    *items, last = hints.split(" · ")
    if len(hints) <= width:
        return hints
    tail = [more, last] if more else [last]
    kept: list[str] = []
    for item in items:
        if len(" · ".join([*kept, item, *tail])) > width:
            break
        kept.append(item)
    return " · ".join([*kept, *tail])


SHORT_SYNC = 28
"""Cells the sync state keeps on a narrow footer (an error is cut with ``…``)."""


def short(text: str, cells: int) -> str:
    return text if len(text) <= cells else text[: cells - 1] + "…"


def context_text(
    used: int | None, window: int | None, guessed: bool = False, estimated: bool = False
) -> str:
    """``ctx 1.2k/4.1k (29%)``; ``~`` before an estimate, ``?`` after a guessed window."""
    shown = counted(used, estimated) if used is not None else "0"
    if window is None:
        return f"ctx {shown}/?"
    percent = 100 * (used or 0) / window
    mark = "?" if guessed else ""
    return f"ctx {shown}/{format_tokens(window)}{mark} ({percent:.0f}%)"


class StatusFooter(Widget):
    DEFAULT_CSS = """
    StatusFooter {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    state: reactive[FooterState] = reactive(FooterState, layout=False)
    """Set by the chat screen whenever any of it changes."""

    def watch_state(self, state: FooterState) -> None:
        level = context_level(state.context_tokens, state.window)
        self.set_class(level == "warning", "-context-warning")
        self.set_class(level == "error", "-context-error")

    def render(self) -> RenderResult:
        s = self.state
        if s.keys:
            more = s.hint.split(" · ")[0]  # the help key
            return Content.styled(fit_hints(s.keys, self.content_size.width, more), "$text")
        sep = (" │ ", "$text-disabled")
        level = context_level(s.context_tokens, s.window)
        context_style = {"warning": "bold $text-warning", "error": "bold $text-error"}.get(
            level, ""
        )
        width = self.content_size.width
        # Whatever the width: model, context, the sync state and the help hint
        # stay; the totals shorten first (the branch's only), then go, then the
        # hint keeps its first key, then a long sync state (an error) is cut,
        # then only says "sync failed" (/sync says why in full).
        sync = strip_control(s.sync)
        first_key = s.hint.split(" · ")[0]
        for totals, hint_text, sync_text in (
            (totals_text(s), s.hint, sync),
            (short_totals_text(s), s.hint, sync),
            (None, s.hint, sync),
            (None, first_key, sync),
            (None, first_key, short(sync, SHORT_SYNC)),
            (None, first_key, sync.split(":")[0]),
        ):
            hint = Content.assemble(
                *(((sync_text, self._sync_style(sync_text)), "  ") if sync_text else ()),
                hint_text,
            )
            left = Content.assemble(
                (strip_control(model_label(s.model)), "bold $text"),
                sep,
                f"thinking {s.thinking}",
                sep,
                (
                    context_text(s.context_tokens, s.window, s.window_guessed, s.context_estimated),
                    context_style,
                ),
                *((sep, totals) if totals else ()),
            )
            gap = width - left.cell_length - hint.cell_length
            if gap > 0:
                return Content.assemble(left, " " * gap, hint)
        return Content.assemble(left, " ", hint).truncate(width, ellipsis=True)

    @staticmethod
    def _sync_style(text: str) -> str:
        return "$text-error" if text.startswith("sync failed") else ""
