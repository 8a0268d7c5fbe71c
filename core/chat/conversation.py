r"""One open session as every front end uses it: who runs a turn.

A :class:`Conversation` holds the session, the settings, the model, thinking
level and system prompt the next message will use, the endpoint and the
session tree (read once, then kept in step with every append). It sends,
retries, edits, compacts, moves between branches, summarizes the branch left
and forks, and reports everything that happens as one event stream
(:mod:`core.chat.events`) to whoever :meth:`~Conversation.subscribe`\ d: the chat
screen, print mode and ``--json`` are consumers of the same stream. Front ends
go through its doors (:meth:`~Conversation.send`, :meth:`~Conversation.edit`,
:meth:`~Conversation.retry`, :meth:`~Conversation.round`) and never assemble a
turn themselves: the tools they offer and what they do between the steps are
arguments of the call (:mod:`core.chat.front_end`).

Changing the model or thinking level only changes what is pending here; the
``model_change`` (and system message) is appended together with the next user
message, so trying models leaves no empty sessions or stray entries behind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, overload

from core.branching.branch_totals import BranchTotals
from core.branching.tree import SessionTree, shared_length
from core.chat.addressing import addressed
from core.chat.events import (
    AgentAsked,
    ColumnFinished,
    CompactionEnded,
    CompactionStarted,
    EntriesSaved,
    Event,
    Notice,
    PositionMoved,
    TurnEnded,
    Waiting,
    WindowLearned,
)
from core.chat.refused_kinds import merged, refused_on
from core.chat.target import (
    UntrustedEndpoint,
    remember_endpoint,
    savable_base_url,
    summarizer_for,
    target_for,
    untrusted_endpoint,
)
from core.chat.window_learning import learn_window, window_at_most
from core.providers.target import Target
from core.sessions.attachments import Attachment
from core.sessions.context import Context, system_prompt
from core.sessions.entries import THINKING_LEVELS, Compaction, Entry, Note
from core.sessions.messages import Message, user_text
from core.sessions.persistence import LearnedWindow
from core.sessions.session import Session
from core.sessions.speakers import Speaker
from core.settings import Agent, Settings
from core.usage import SessionTotals

if TYPE_CHECKING:
    from core.chat.fanout import FanOutResult
    from core.chat.front_end import Answer, ToolUse, TurnHooks
    from core.chat.results import AgentResult
    from core.providers.base import ProviderError
    from core.tools.registry import ToolRegistry

Listener = Callable[[Event], None]


@dataclass(frozen=True)
class Totals:
    """What the footer shows: the current branch's usage, the session's, the context."""

    tokens: int = 0
    cost: float = 0.0
    tokens_estimated: bool = False
    """Some reply on the branch was counted here (its server said no usage)."""
    context_tokens: int | None = None
    """What the next request will hold (the latest reply's reported usage plus an
    estimate of what came after it); None on an empty path."""
    context_estimated: bool = False
    """No reply on the path reported usage: :attr:`context_tokens` is all estimate."""
    session_tokens: int | None = None
    """Every branch of the session; None until the session's totals are loaded."""
    session_cost: float = 0.0
    session_estimated: bool = False
    """:attr:`session_tokens` holds an estimate too."""


class Conversation:
    def __init__(
        self,
        session: Session,
        settings: Settings,
        *,
        default_model: str,
        default_thinking: str,
        api_base: str | None,
        model: str | None = None,
        thinking: str | None = None,
        system: str | None = None,
    ) -> None:
        """``model``/``thinking``/``system`` and ``api_base`` are explicit choices
        (command-line flags) that beat what the session's path says; the defaults
        do not."""
        self.session = session
        self.settings = settings
        self._use_refusals(session.path)
        self.explicit_api_base = api_base
        self._listeners: list[Listener] = []
        self._tree: SessionTree | None = None
        self._tree_lock = asyncio.Lock()
        session.on_append(self._appended)
        path_model, path_thinking = session.model(default_model, default_thinking)
        self.model = model or path_model
        self.thinking = thinking or path_thinking
        self.pending_system = system or (None if session.path else settings.system)
        self._learning: dict[tuple[str, str | None], asyncio.Task[LearnedWindow | None]] = {}
        self.session_totals = SessionTotals()
        """Usage of every branch: :meth:`load_totals` once, then every append adds to it."""
        session.on_append(self.session_totals.add)
        self._branch_totals = BranchTotals()
        """The current path's usage and context size, remembered as the path changes."""

    # --- the event stream -------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` for every event from now on; returns the
        function that stops it. Listeners must be quick and must not raise."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _publish(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _appended(self, entries: Sequence[Entry]) -> None:
        if self._tree is not None and entries:
            for entry in entries:
                self._tree.add(entry)
            self._tree.move_leaf(entries[-1].id)
        self._publish(EntriesSaved(tuple(entries)))

    def _waiting(self, seconds: float, error: ProviderError) -> None:
        self._publish(Waiting(seconds, error))

    # --- the session tree -------------------------------------------------------

    @property
    def known_tree(self) -> SessionTree | None:
        """The tree once :meth:`tree` has read it (kept in step since); None before."""
        return self._tree

    def entries_arrived(self) -> None:
        """Entries were added to the session from elsewhere (a sync took them
        from another machine): the tree is read again when next asked."""
        self._tree = None

    async def tree(self) -> SessionTree:
        """The whole session tree: read the first time, then kept in step with
        every append (and brought up to the current path, which a fan-out may
        have changed without appending here)."""
        async with self._tree_lock:
            session = self.session
            if self._tree is None:
                entries = await session.store.entries(session.id) if session.persisted else []
                labels = await session.labels() if session.persisted else {}
                self._tree = SessionTree.from_entries(entries, labels, session.leaf_id)
            self._tree.add_path(session.path)
            return self._tree

    async def load_totals(self) -> None:
        await self.session_totals.load(self.session.store, self.session.id)

    @property
    def target(self) -> Target:
        """Where the current model's requests go: what every front end sends by."""
        return self.target_for(self.model)

    def target_for(self, model: str) -> Target:
        """Where ``model``'s requests go from this session (:func:`~core.chat.target.target_for`)."""
        return target_for(model, self.settings, self.explicit_api_base, path=self.session.path)

    @property
    def api_base(self) -> str | None:
        """The base URL of :attr:`target`."""
        return self.target.api_base

    @property
    def endpoint_to_confirm(self) -> str | None:
        """The endpoint saved with the current model that the user never named
        (it came with an imported session): nothing goes there until
        :meth:`trust_endpoint`; None when requests may go out."""
        return untrusted_endpoint(
            self.session.path, self.model, self.explicit_api_base, self.settings
        )

    def check_endpoint(self, models: Sequence[str] = ()) -> None:
        """Raise :class:`~core.chat.target.UntrustedEndpoint` when a request for the
        current model (or any of ``models``) would go to an endpoint the user
        never named. Every door that sends calls it before writing anything."""
        for model in models or (self.model,):
            url = untrusted_endpoint(
                self.session.path, model, self.explicit_api_base, self.settings
            )
            if url is not None:
                raise UntrustedEndpoint(url)

    def trust_endpoint(self, url: str) -> None:
        """The user said yes to ``url``: its origin takes requests (and keys) from now on."""
        remember_endpoint(url)

    def _model_change(self):
        if self.explicit_api_base:
            remember_endpoint(self.explicit_api_base)
        return self.session.model_change_for(
            self.model, self.thinking, savable_base_url(self.target.chosen_base)
        )

    @property
    def system(self) -> str | None:
        """The system prompt the next request will carry."""
        return self.pending_system or system_prompt(self.session.path)

    def go_on_from(self, other: Conversation) -> None:
        """A new session opened from ``other`` (ctrl+n) keeps its model,
        thinking level and endpoint, rather than the launch's defaults."""
        if self.session.path:
            return  # a session with a path has its own
        endpoint = other.target.chosen_base
        self.model, self.thinking = other.model, other.thinking
        if endpoint is not None:
            self.explicit_api_base = endpoint

    def set_model(self, model: str) -> None:
        """The model of the next request (saved with the next message)."""
        self.model = model

    def cycle_thinking(self) -> str:
        index = THINKING_LEVELS.index(self.thinking) if self.thinking in THINKING_LEVELS else 0
        self.thinking = THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)]
        return self.thinking

    # --- the model's window --------------------------------------------------------

    async def learn_window(self) -> None:
        """Ask the model's endpoint for its window when nothing else knows it
        (:mod:`core.chat.window_learning`: once per endpoint and model, remembered in
        the database); on an answer :attr:`settings` say it and
        :class:`WindowLearned` is published. Every request waits for this."""
        if self.endpoint_to_confirm is not None:
            return  # not even a question goes there before the user says so
        target = self.target
        key = (self.model, target.api_base)
        task = self._learning.get(key)
        if task is None:
            task = asyncio.ensure_future(
                learn_window(self.session.store, self.model, self.settings, target)
            )
            self._learning[key] = task
        self._use_window(await asyncio.shield(task))

    async def _learn_from_overflows(self, result: AgentResult, model: str, target: Target) -> None:
        """A request ``target``'s server refused as too long was larger than
        ``model``'s window there (the session's model, or the agent's that answered)."""
        refused = [
            entry.payload.tokens_before
            for turn in result.turns
            for entry in turn.compactions
            if isinstance(entry.payload, Compaction)
            and entry.payload.details.get("trigger") == "overflow"
            and entry.payload.tokens_before > 0
        ]
        refused += [turn.refused_tokens for turn in result.turns if turn.refused_tokens]
        if refused:
            self._use_window(
                await window_at_most(self.session.store, model, self.settings, target, min(refused))
            )

    def _use_refusals(self, entries: Iterable[Entry]) -> None:
        """Kinds of attachment a reply among ``entries`` was refused for are
        sent as notes from now on (:mod:`core.chat.refused_kinds`)."""
        refused = refused_on(entries)
        if refused:
            kinds = merged(self.settings.refused_kinds, refused)
            self.settings = replace(self.settings, refused_kinds=kinds)

    def _use_window(self, learned: LearnedWindow | None) -> None:
        if learned is None or not learned.tokens:
            return
        if self.settings.context_windows.get(learned.model) != learned.tokens:
            windows = {**self.settings.context_windows, learned.model: learned.tokens}
            self.settings = replace(self.settings, context_windows=windows)
            self._publish(WindowLearned(learned.model, learned.tokens, learned.source))

    def next_context(self, tools: ToolRegistry | None = None) -> Context:
        """What the next request on the path sends (the ``openai`` export):
        built as a turn builds it, with ``tools``' share of the window."""
        from core.chat.turn import next_context

        return next_context(
            self.session,
            self.settings,
            model=self.model,
            thinking=self.thinking,
            tools=tools.specs() if tools is not None else (),
        )

    # --- turns ------------------------------------------------------------------

    @overload
    async def send(
        self,
        text: str,
        attachments: Sequence[Attachment] = ...,
        *,
        tools: ToolUse | None = ...,
        hooks: None = ...,
    ) -> AgentResult: ...
    @overload
    async def send(
        self,
        text: str,
        attachments: Sequence[Attachment] = ...,
        *,
        tools: ToolUse | None = ...,
        hooks: TurnHooks,
    ) -> AgentResult | None: ...
    async def send(
        self,
        text: str,
        attachments: Sequence[Attachment] = (),
        *,
        tools: ToolUse | None = None,
        hooks: TurnHooks | None = None,
    ) -> AgentResult | None:
        """Save the user's message and answer it: each agent it addresses
        (:func:`core.chat.addressing.addressed`) in turn, each after the previous
        answered (a reply that failed ends the sequence), else the session's model.
        Returns the last reply's result (None: ``hooks.answering`` answered
        otherwise). Stopped while the message is being saved, the save is
        finished first: what the user typed is kept."""
        asked = addressed(text, self.settings.agents)
        if asked.note is not None and self.settings.agents:
            self._publish(Notice(asked.note))
        if asked.agents:
            self.check_endpoint([agent.model for agent in asked.agents])
        await self._save_message(text, attachments, hooks.saved if hooks is not None else None)
        return await self._answer(lambda: self._answer_in_turn(asked.agents, tools), hooks)

    async def _save_message(
        self,
        text: str,
        attachments: Sequence[Attachment],
        saved: Callable[[Sequence[Entry]], None] | None,
    ) -> None:
        async def save() -> None:
            entries = await self.add_message(text, attachments)
            if saved is not None:
                saved(entries)

        saving = asyncio.ensure_future(save())
        try:
            await asyncio.shield(saving)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await saving  # its failure is the save's; the caller hears it was stopped
            raise

    async def _answer(self, answer: Answer, hooks: TurnHooks | None) -> AgentResult | None:
        if hooks is not None and hooks.answering is not None:
            return await hooks.answering(answer)
        return await answer()

    async def _answer_in_turn(
        self, agents: Sequence[Agent], tools: ToolUse | None = None
    ) -> AgentResult:
        """Let ``agents`` answer the path one after the other (none: the
        session's model); stops at the first reply that did not finish."""
        if not agents:
            return await self._reply(None, tools)
        for agent in agents:
            result = await self._reply(agent, tools)
            if result.stop != "answered":
                break
        return result

    async def round(
        self, rounds: int, *, tools: ToolUse | None = None, hooks: TurnHooks | None = None
    ) -> AgentResult | None:
        """``/round N``: the agents of the round table answer each other,
        ``rounds`` times each in turn, one reply a turn (cancel it as any reply;
        ``hooks.answering`` wraps the whole round). The agents are those the
        last user message addressed, else those that answered since it; None
        when fewer than two."""
        agents = self.round_agents()
        if len(agents) < 2:
            return None

        async def answer() -> AgentResult | None:
            result = None
            for _ in range(rounds):
                result = await self._answer_in_turn(agents, tools)
                if result.stop != "answered":
                    break
            return result

        return await self._answer(answer, hooks)

    def round_agents(self) -> tuple[Agent, ...]:
        """Who a round lets speak (see :meth:`round`), in their order."""
        path = self.session.path
        last_user = next((i for i in range(len(path) - 1, -1, -1) if _is_question(path[i])), None)
        if last_user is None:
            return ()
        message = path[last_user].message
        assert message is not None
        asked = addressed(message.text, self.settings.agents).agents
        if asked:
            return asked
        spoke = [
            e.message.agent
            for e in path[last_user + 1 :]
            if e.message is not None and e.message.agent is not None
        ]
        return tuple(a for name in dict.fromkeys(spoke) if (a := self.agent(name)) is not None)

    def models_for(self, text: str) -> list[str]:
        """The models sending ``text`` would ask, in order (its agents', else the session's)."""
        return [a.model for a in addressed(text, self.settings.agents).agents] or [self.model]

    def agent(self, name: str | None) -> Agent | None:
        """The configured agent called ``name`` (case-insensitively), if any."""
        if name is None:
            return None
        return next((a for a in self.settings.agents if a.name.casefold() == name.casefold()), None)

    async def add_message(self, text: str, attachments: Sequence[Attachment] = ()) -> list[Entry]:
        """Save the user's message (with any system/model change first) in one
        transaction; returns the new entries."""
        self.check_endpoint()
        for attachment in attachments:
            await self.session.store.put_blob(attachment.blob)
        preamble = [
            self.session.system_change_for(self.pending_system),
            self._model_change(),
        ]
        message = user_text(text, tuple(a.content for a in attachments))
        entries = await self.session.append_many([p for p in preamble if p is not None] + [message])
        self.pending_system = None
        return entries

    async def _reply(self, agent: Agent | None = None, tools: ToolUse | None = None) -> AgentResult:
        """Answer the path as it is (the last message is the user's or a tool
        result, or another speaker's reply on a round table): stream the reply,
        run the tools it calls, and ask again until the model is done.
        ``agent`` answers with its own model, thinking level and system prompt,
        hearing the others as named users (:mod:`core.sessions.speakers`); None:
        the session's model. ``tools``: offered to the model (None: it answers
        without tools). Cancelling saves what arrived, then re-raises."""
        from core.chat.agent import run_agent

        user_name = self.settings.user_name
        if agent is None:
            model, target = self.model, self.target
            speaker = Speaker(None, user_name, thinking=self.thinking)
            self.check_endpoint()
            await self.learn_window()
        else:
            model = agent.model
            target = self.target_for(agent.model)
            note = Note(agent.note, agent.note_depth) if agent.note else None
            speaker = Speaker(agent.name, user_name, agent.system, agent.thinking, note)
            self.check_endpoint([agent.model])
            self._publish(AgentAsked(agent.name, agent.model))
        result = await run_agent(
            self.session,
            self.settings,
            model=model,
            target=target,
            speaker=speaker,
            tools=tools.registry if tools is not None else None,
            approve=tools.approve if tools is not None else None,
            emit=self._publish,
        )
        await self._learn_from_overflows(result, model, target)
        self._use_refusals(turn.entry for turn in result.turns if turn.entry is not None)
        self._publish(TurnEnded(result))
        return result

    async def compare(self, models: Sequence[str]) -> FanOutResult:
        """Answer the question at the leaf with every model in ``models`` at once,
        each reply a new alternative of it (:func:`core.chat.fanout.fan_out`). Each
        model's progress comes as column events, what its column saved as
        :class:`EntriesSaved`; the position ends on the first model's reply.
        Cancelling saves what arrived in every column, then re-raises."""
        from core.chat.fanout import fan_out

        self.check_endpoint(models)

        def column_event(event: Event) -> None:
            self._publish(event)
            if isinstance(event, ColumnFinished) and event.result.entries:
                # the columns write beside the path, out of the session's hearing
                self.session_totals.add(event.result.entries)
                if self._tree is not None:
                    for entry in event.result.entries:
                        self._tree.add(entry)
                self._publish(EntriesSaved(event.result.entries))

        before = self.session.leaf_id
        try:
            return await fan_out(
                self.session,
                self.settings,
                models,
                targets=self.target_for,
                thinking=self.thinking,
                on_event=column_event,
            )
        finally:
            if self._tree is not None:
                self._tree.move_leaf(self.session.leaf_id)
            if self.session.leaf_id != before:
                self._publish(PositionMoved(self.session.leaf_id, False))

    async def retry(
        self,
        entry_id: str | None = None,
        *,
        tools: ToolUse | None = None,
        hooks: TurnHooks | None = None,
    ) -> AgentResult | None:
        """Answer again: a new alternative of ``entry_id`` (a reply), else of the
        last reply on the path, by the agent that wrote it (else the session's
        model); None when there is no message to answer (or
        ``hooks.answering`` answered otherwise)."""
        replied = await self._reply_at(entry_id)
        agent = self.agent(replied.agent if replied is not None else None)
        if not await self._prepare_retry(entry_id, agent is not None):
            return None
        return await self._answer(lambda: self._reply(agent, tools), hooks)

    async def _reply_at(self, entry_id: str | None) -> Message | None:
        """The reply a retry replaces: ``entry_id``'s, else the path's last if it is one."""
        if entry_id is not None:
            message = (await self.session.entry(entry_id)).message
        else:
            path = self.session.path
            message = path[-1].message if path else None
        return message if message is not None and message.role == "assistant" else None

    async def edit(
        self,
        entry: Entry,
        text: str,
        attachments: Sequence[Attachment] = (),
        *,
        tools: ToolUse | None = None,
        hooks: TurnHooks | None = None,
    ) -> AgentResult | None:
        """Send ``text`` as an alternative of the user's message ``entry``: the
        old branch stays, the new one is answered (:meth:`send`), unless
        ``hooks.left`` holds it back after the move (then None)."""
        old_leaf = self.session.leaf_id
        left = await self.move_to(entry.parent_id)
        if hooks is not None and hooks.left is not None and not await hooks.left(old_leaf, left):
            return None
        return await self.send(text, attachments, tools=tools, hooks=hooks)

    async def move_to(self, entry_id: str | None) -> bool:
        """Make ``entry_id`` the current position (persisted); True when the move
        left a branch holding a message of the user's (worth a summary: flipping
        between alternative replies leaves only replies)."""
        tree = await self.tree()
        old_path = self.session.path
        path = None
        if entry_id is None or entry_id in tree:
            path = tree.path_entries(entry_id, old_path)
        await self.session.move_leaf(entry_id, path=path)
        tree.move_leaf(entry_id)
        left = any(  # among the entries left behind: the old path after the shared part
            _is_question(old_path[i])
            for i in range(shared_length(old_path, self.session.path), len(old_path))
        )
        self._publish(PositionMoved(entry_id, left))
        return left

    async def summarize_branch(self, old_leaf: str, new_entry: str | None) -> Entry:
        """Append, at the current position, a summary of the branch left when
        moving from ``old_leaf`` to ``new_entry``. Raises
        :class:`~core.chat.branch_summary.BranchSummaryError` (nothing written)."""
        from core.chat.branch_summary import summarize_branch

        self.check_endpoint()
        return await summarize_branch(
            self.session,
            self.settings,
            model=self.model,
            old_leaf_id=old_leaf,
            new_entry_id=new_entry,
            target=self.target,
            tree=await self.tree(),
            on_wait=self._waiting,
        )

    async def fork(
        self, entry_id: str, first_k: int | None = None, last_n: int | None = None
    ) -> Session:
        """A new session holding the path up to ``entry_id`` (optionally only its
        first ``first_k`` and last ``last_n`` messages); this one is unchanged."""
        return await self.session.fork(entry_id, first_k, last_n)

    async def set_label(self, entry_id: str, label: str | None) -> None:
        """Name an entry (None or empty: remove its label)."""
        await self.session.set_label(entry_id, label or None)
        (await self.tree()).set_label(entry_id, label or None)

    async def compact(self, focus: str | None = None) -> Entry:
        """Summarise the history now (``/compact``). Raises
        :class:`~core.compaction.run.NothingToCompact` when that would not make the
        context smaller and :class:`~core.compaction.run.CompactionError` when it
        fails; either way nothing is written."""
        from core.compaction.run import compact

        self.check_endpoint()
        await self.learn_window()
        self._publish(CompactionStarted("manual"))
        entry = None
        try:
            entry = await compact(
                self.session,
                self.settings,
                model=self.model,
                summarizer=summarizer_for(self.model, self.target, self.settings),
                focus=focus,
                on_wait=self._waiting,
            )
        finally:
            self._publish(CompactionEnded("manual", entry))
        return entry

    async def _prepare_retry(self, entry_id: str | None, by_agent: bool) -> bool:
        """Move the leaf back before a reply (``entry_id``, else the last one if
        the path ends with a reply) and record a model change if needed; False
        when there is no message to answer (``by_agent``: a round-table agent
        answers another speaker's reply too). The move leaves no branch worth a
        summary: the old reply stays as an alternative of the new one."""
        self.check_endpoint()
        before = self.session.leaf_id
        if entry_id is not None:
            entry = await self.session.entry(entry_id)
            if entry.message is None or entry.message.role != "assistant":
                return False
            await self.session.move_leaf(entry.parent_id)
        else:
            path = self.session.path
            if path and path[-1].message is not None and path[-1].message.role == "assistant":
                await self.session.move_leaf(path[-1].parent_id)
        if self.session.leaf_id != before:
            self._publish(PositionMoved(self.session.leaf_id, False))
        last = next((e.message for e in reversed(self.session.path) if e.message is not None), None)
        answerable = ("user", "tool_result", "assistant") if by_agent else ("user", "tool_result")
        if last is None or last.role not in answerable:
            return False
        change = self._model_change()
        if change is not None:
            await self.session.append(change)
        return True

    def totals(self) -> Totals:
        """The footer's figures: cost what the path changed since last asked."""
        path = self.session.path
        branch = self._branch_totals.usage(path)
        session = self.session_totals.usage
        return Totals(
            tokens=branch.total_tokens,
            cost=branch.cost,
            tokens_estimated=branch.estimated,
            context_tokens=self._branch_totals.context_tokens(path, self.model) if path else None,
            context_estimated=self._branch_totals.context_estimated(path),
            session_tokens=session.total_tokens if session is not None else None,
            session_cost=session.cost if session is not None else 0.0,
            session_estimated=session is not None and session.estimated,
        )


def _is_question(entry: Entry) -> bool:
    return entry.message is not None and entry.message.role == "user"
