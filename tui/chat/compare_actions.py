"""Compare from the chat: ``/compare``, fan-out replies, the compare screen.

An object the chat screen owns; it uses the screen's session, session tree,
chat view, branch actions and reply worker through :class:`CompareHost`,
the protocol of what it needs (the screen imports this module, never the
other way round):

- ``/compare MODEL MODEL [MODEL MODEL]`` makes the next message go to those
  models at once (``/compare`` alone: the ``[compare] models`` setting;
  ``/compare off`` goes back to one model). The composer says so until then.
- ``alt+shift+v`` on a reply answers its question again with those models (the last
  ``/compare`` list, else the setting).
- A fan-out runs in the chat's reply worker (Esc stops every stream) and
  opens the compare screen at once, streaming into its columns; when it
  ends, the chat shows the first model's reply with ◀ 1/N ▶.
- ``alt+v`` on a message with alternatives opens them side by side.

Enter on a column keeps it: the position moves there as ◀ ▶ does.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Protocol

from core.sessions.entries import Entry
from core.settings import MAX_MODELS, MIN_MODELS

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from typing import Any

    from textual.app import App
    from textual.notifications import SeverityLevel
    from textual.worker import Worker

    from core.chat.conversation import Conversation
    from core.chat.events import Event
    from core.sessions.session import Session
    from tui.chat.branching import BranchController
    from tui.chat.composer import Composer
    from tui.screens.compare import Kept
    from tui.widgets.chat_view import ChatView

# The fan-out, the comparisons and the compare screen are imported when first
# used: the chat screen owns this object from its first frame.

USAGE = (
    f"Usage: /compare MODEL MODEL [MODEL…] ({MIN_MODELS} to {MAX_MODELS} models), or /compare off"
)


def parse_models(arg: str, default: tuple[str, ...]) -> list[str] | str:
    """The models of ``/compare ARG`` (the default when none are named), or why not."""
    models = list(dict.fromkeys(arg.replace(",", " ").split())) or list(default)
    if not MIN_MODELS <= len(models) <= MAX_MODELS:
        if not arg.strip() and not default:
            return f"{USAGE}; or set [compare] models in the config"
        return USAGE
    return models


class CompareHost(Protocol):
    """What the /compare actions use of the chat screen."""

    conversation: Conversation
    reply_worker: Worker | None

    @property
    def app(self) -> App: ...
    @property
    def session(self) -> Session: ...
    @property
    def branches(self) -> BranchController: ...
    @property
    def chat_view(self) -> ChatView: ...
    @property
    def composer(self) -> Composer: ...
    def notify(self, message: str, *, severity: SeverityLevel = ...) -> None: ...
    def run_worker(
        self, work: Coroutine[Any, Any, None], *, group: str = ..., exit_on_error: bool = ...
    ) -> Worker[None]: ...
    async def view_settled(self) -> None: ...
    def refresh_footer(self) -> None: ...
    def action_stop(self) -> None: ...


class CompareActions:
    def __init__(self, screen: CompareHost) -> None:
        self.screen = screen
        self.pending: list[str] | None = None
        """Models the next message goes to (``/compare``), until it is sent."""
        self.last: list[str] | None = None

    @property
    def models(self) -> list[str] | None:
        """What ``alt+shift+v`` regenerates with: the last ``/compare`` list, else the setting."""
        default = list(self.screen.conversation.settings.compare.models)
        return self.pending or self.last or (default if len(default) >= MIN_MODELS else None)

    # --- /compare ------------------------------------------------------------

    async def command(self, arg: str) -> bool:
        screen = self.screen
        if arg.strip().lower() == "off":
            self.pending = None
            screen.composer.set_note(None)
            screen.notify("The next message goes to one model.")
            return True
        models = parse_models(arg, screen.conversation.settings.compare.models)
        if isinstance(models, str):
            screen.notify(models, severity="warning")
            return False
        self.pending = self.last = models
        screen.composer.set_note(f"⇉ the next message goes to {', '.join(models)} · /compare off")
        return True

    def take_pending(self) -> list[str] | None:
        """The models for the reply about to be written (once: the note goes)."""
        models, self.pending = self.pending, None
        if models is not None:
            self.screen.composer.set_note(None)
        return models

    # --- fan-out ----------------------------------------------------------------

    async def fan_out(self, models: list[str], again: str | None = None) -> None:
        """Answer the question at the leaf with ``models`` (in the reply worker);
        ``again``: the question of this reply instead, beside its answers."""
        from core.chat.fanout import FanOutError, checked_models, question_of
        from tui.screens.compare import CompareScreen

        screen = self.screen
        conversation = screen.conversation
        if again is not None:
            await conversation.move_to(await question_of(screen.session, again))
        try:
            models = checked_models(screen.session, models)
        except FanOutError as error:
            screen.notify(f"{str(error)[:1].upper()}{str(error)[1:]}.", severity="warning")
            return
        question = next(
            (m.text for m in reversed(screen.session.messages()) if m.role == "user"), ""
        )
        view = CompareScreen.live(
            models, on_stop=screen.action_stop, on_label=self.label, question=question
        )

        def on_event(event: Event) -> None:
            if view.is_attached:
                view.feed(event)

        await screen.app.push_screen(view, self.kept)
        stop_listening = conversation.subscribe(on_event)
        try:
            await conversation.compare(models)
        finally:
            stop_listening()
            view.end_streams()
            await screen.view_settled()  # the chat shows the first model's reply
            screen.chat_view.refresh_branch_info()
            screen.refresh_footer()

    async def regenerate(self, entry: Entry) -> None:
        """``alt+shift+v``: answer the focused reply's question again with the compare models."""
        models = self.models
        if models is None:
            self.screen.notify(
                "Which models? /compare MODEL MODEL first, or set [compare] models in the config.",
                severity="warning",
            )
            return
        self.last = models
        await self.fan_out(models, again=entry.id)

    # --- the compare screen ----------------------------------------------------------

    async def open_alternatives(self, entry: Entry) -> None:
        """``alt+v``: the alternatives of the focused message, side by side."""
        from core.branching.comparison import ComparisonError, anchor_text, of_alternatives
        from tui.screens.compare import CompareScreen

        screen = self.screen
        tree = await screen.conversation.tree()
        try:
            comparison = of_alternatives(tree, entry.id, screen.session.leaf_id)
        except ComparisonError as error:
            screen.notify(f"{str(error)[:1].upper()}{str(error)[1:]}.", severity="warning")
            return
        view = CompareScreen(
            comparison,
            on_label=self.label,
            labels=dict(tree.labels),
            question=anchor_text(tree, comparison.anchor_id),
        )
        screen.app.push_screen(view, self.kept)

    def kept(self, kept: Kept | None) -> None:
        if kept is not None:
            self.screen.run_worker(self._keep(kept), group="compare-keep", exit_on_error=False)

    async def _keep(self, kept: Kept) -> None:
        """Move to the kept column once the fan-out's worker has finished."""
        worker = self.screen.reply_worker
        if worker is not None and worker.is_running:
            with contextlib.suppress(Exception):
                await worker.wait()
        self.screen.branches.move_to(kept.leaf_id, kept.entry_id)

    def label(self, entry_id: str, label: str | None) -> None:
        tree = self.screen.conversation.known_tree
        if tree is not None and entry_id in tree:
            self.screen.branches.label(tree.entry(entry_id), label or "")
