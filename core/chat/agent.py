"""The tool loop: ask the model, run the tools it calls, ask again.

After an assistant turn with tool calls, the calls are checked (arguments
parsed and validated against the tool's schema), approved when they have side
effects, and run: consecutive calls of read-only tools run concurrently, a
call with side effects runs alone, in order. The assistant message and the
``tool_result`` message answering every one of its calls are appended in one
transaction (``Session.append_many``), so the database never holds a call
without its result. Then the model is asked again, until it answers without
tool calls or ``max_tool_steps`` rounds have run.

Cancellation (the user pressed Esc) stops the loop: a call that was running
or not yet started gets an error result, the turn is saved with them, and
``CancelledError`` propagates.

Everything that happens is reported through one ``emit`` (:mod:`core.chat.events`):
stream events as :func:`core.chat.turn.run_turn` reports them, a
:class:`~core.chat.events.ToolChanged` on every change of a :class:`ToolActivity`,
a :class:`~core.chat.events.Notice` for the user (an MCP server that did not
start). The approval callback (``approve``, see
:data:`core.tools.base.ApproveFn`) is the one question asked back.
"""

from __future__ import annotations

import asyncio
import time

from core.chat.events import Emit, Notice, ToolChanged, ignore
from core.chat.results import AgentResult, AgentStop, ToolActivity, ToolState, TurnResult
from core.chat.turn import run_turn
from core.providers.base import ToolSpec
from core.providers.target import Target
from core.sessions.content import TextContent, ToolCallContent, ToolResultContent
from core.sessions.entries import Entry
from core.sessions.messages import Message
from core.sessions.session import Session
from core.sessions.speakers import Speaker
from core.settings import Settings
from core.tools.arg_check import check_arguments
from core.tools.base import (
    ApproveFn,
    ToolContext,
    ToolError,
    ToolOutput,
    error_result,
    unrun_results,
)
from core.tools.outcome import ToolOutcome, outcomes_meta
from core.tools.registry import ToolRegistry

CANCELLED_RUNNING = "cancelled: the user stopped the turn while this call was running"
CANCELLED_PENDING = "not run: the user stopped the turn before this call started"
_UNFINISHED_REPLY = {
    "length": "the reply reached the output token limit, so this call may be incomplete",
    "error": "the reply failed before it was complete",
    "interrupted": "the reply was cut off before it was complete",
}


def _outcome_of(activity: ToolActivity) -> ToolOutcome:
    state = activity.state if activity.state in ("done", "error", "denied") else "error"
    elapsed = activity.elapsed
    return ToolOutcome(state, round(elapsed, 3) if elapsed is not None else None)


class _Calls:
    """Runs one assistant turn's tool calls."""

    def __init__(
        self,
        calls: list[ToolCallContent],
        tools: ToolRegistry,
        ctx: ToolContext,
        approve: ApproveFn | None,
        emit: Emit,
    ) -> None:
        self.tools = tools
        self.ctx = ctx
        self.approve = approve
        self._emit = emit
        self.activities = [
            ToolActivity(
                call,
                tool := tools.get(call.name),
                tool.name if tool else tools.display_name(call.name),
            )
            for call in calls
        ]

    def emit(self, activity: ToolActivity) -> None:
        self._emit(ToolChanged(activity))

    def finish(self, activity: ToolActivity, state: ToolState, result: ToolResultContent) -> None:
        if activity.started_at is not None:
            activity.ended_at = time.monotonic()
        activity.state = state
        activity.result = result
        self.emit(activity)

    def results(self) -> Message:
        """The results, with how each call ended (see core.tools.outcome)."""
        finished = [a for a in self.activities if a.result is not None]
        outcomes = {a.call.id: _outcome_of(a) for a in finished}
        return Message(
            role="tool_result",
            content=tuple(a.result for a in finished if a.result is not None),
            meta=outcomes_meta(outcomes),
        )

    async def run(self) -> None:
        for activity in self.activities:
            self.emit(activity)
        pending = [a for a in self.activities if a.result is None]
        while pending:
            batch = [pending.pop(0)]
            if self._concurrent(batch[0]):
                while pending and self._concurrent(pending[0]):
                    batch.append(pending.pop(0))
            if len(batch) == 1:
                await self.one(batch[0])
            else:
                await asyncio.gather(*(self.one(a) for a in batch))

    def refuse_from(self, index: int, text: str) -> int:
        """Answer the calls from ``index`` on with ``text`` before any runs; how many."""
        refused = self.activities[index:]
        for activity in refused:
            self.finish(activity, "error", error_result(activity.call, text))
        return len(refused)

    def cancel_rest(self) -> None:
        for activity in self.activities:
            if activity.result is None:
                text = CANCELLED_RUNNING if activity.state == "running" else CANCELLED_PENDING
                self.finish(activity, "error", error_result(activity.call, text))

    @staticmethod
    def _concurrent(activity: ToolActivity) -> bool:
        return activity.tool is None or not activity.tool.side_effects

    async def one(self, activity: ToolActivity) -> None:
        call, tool = activity.call, activity.tool
        if tool is None:
            self.finish(activity, "error", error_result(call, self.tools.missing_reason(call.name)))
            return
        try:
            arguments = await check_arguments(call, tool)
            if tool.needs_approval and not self.tools.allowed_for_session(tool):
                activity.preview = await tool.make_preview(arguments, self.ctx)
                self.emit(activity)
                denied = await self._ask(activity)
                if denied is not None:
                    self.finish(activity, "denied", error_result(call, denied))
                    return
            activity.state = "running"
            activity.started_at = time.monotonic()
            self.emit(activity)
            output = await tool.run(arguments, self.ctx)
        except ToolError as error:
            self.finish(activity, "error", error_result(call, str(error)))
            return
        except Exception as error:  # a bug in a tool must not end the conversation
            self.finish(
                activity,
                "error",
                error_result(call, f"{tool.name} failed: {type(error).__name__}: {error}"),
            )
            return
        if isinstance(output, str):
            output = ToolOutput.text(output)
        content = output.content
        if not any(not isinstance(c, TextContent) or c.text for c in content):
            content = (TextContent("(no output)"),)
        result = ToolResultContent(call.id, content, output.is_error)
        self.finish(activity, "error" if output.is_error else "done", result)

    async def _ask(self, activity: ToolActivity) -> str | None:
        """None when approved; else the text of the denial for the model."""
        tool = activity.tool
        assert tool is not None and activity.preview is not None
        if self.approve is None:
            return f"denied: {tool.name} needs the user's approval and nobody can be asked here"
        approval = await self.approve(activity.call, tool, activity.preview)
        if approval.decision == "deny":
            said = f" The user said: {approval.message}" if approval.message else ""
            return f"denied: the user did not allow this call.{said}"
        if approval.decision == "session":
            self.tools.allow_for_session(tool)
        return None


async def _save(session: Session, turn: TurnResult, results: Message) -> Entry:
    """The assistant turn (under the id its checkpoints have) and its results,
    in one transaction that a cancellation of the caller does not interrupt;
    returns the turn's entry."""
    chain = [turn.message, results]
    return (await asyncio.shield(session.append_many(chain, first_id=turn.pending_id)))[0]


async def run_agent(
    session: Session,
    settings: Settings,
    *,
    model: str,
    target: Target,
    speaker: Speaker | None = None,
    tools: ToolRegistry | None = None,
    approve: ApproveFn | None = None,
    emit: Emit = ignore,
) -> AgentResult:
    """Answer the session's path, running tools until the model is done (at most
    ``settings.max_tool_steps`` rounds).

    The user's message must already be appended. Without ``tools`` this is one
    :func:`run_turn`.
    """
    limit = settings.max_tool_steps
    calls_left = settings.tools.max_calls_per_reply
    notices: list[str] = []

    def notice(text: str) -> None:
        notices.append(text)
        emit(Notice(text))

    specs: tuple[ToolSpec, ...] = ()
    if tools is not None:
        for text in await tools.prepare():
            notice(text)
        specs = tools.specs()
    ctx = tools.context(session.store) if tools is not None else None
    turns: list[TurnResult] = []
    steps = 0
    while True:
        turn = await run_turn(
            session,
            settings,
            model=model,
            target=target,
            speaker=speaker,
            emit=emit,
            tools=specs,
            defer_tool_calls=tools is not None,
        )
        turns.append(turn)
        for text in turn.notes:  # a failed compaction, messages the safety net stubbed
            notice(text)
        if turn.entry is not None:  # no tool calls: already saved
            return AgentResult(turns, _stop_of(turn), steps, notices)
        assert tools is not None and ctx is not None
        message = turn.message
        calls = message.tool_calls
        if message.stop_reason not in ("tool_use", "stop"):
            why = _UNFINISHED_REPLY.get(message.stop_reason or "", "the reply did not finish")
            turn.entry = await _save(session, turn, unrun_results(calls, f"not run: {why}"))
            return AgentResult(turns, _stop_of(turn), steps, notices)
        if steps >= limit:
            text = (
                f"not run: the limit of {limit} tool steps (setting max_tool_steps) was reached; "
                "answer with what you have, or ask the user to continue"
            )
            turn.entry = await _save(session, turn, unrun_results(calls, text))
            return AgentResult(turns, "step_limit", steps, notices)
        runner = _Calls(calls, tools, ctx, approve, emit)
        refused = runner.refuse_from(calls_left, _over_call_limit(settings))
        calls_left -= len(calls) - refused
        try:
            await runner.run()
        except asyncio.CancelledError:
            runner.cancel_rest()
            turn.entry = await _save(session, turn, runner.results())
            raise
        turn.entry = await _save(session, turn, runner.results())
        steps += 1
        if refused:
            notice(
                f"stopped at the limit of {settings.tools.max_calls_per_reply} tool calls in one "
                f"reply (setting tools.max_calls_per_reply); {refused} more calls were not run. "
                "Send a message to let the model continue."
            )
            return AgentResult(turns, "call_limit", steps, notices)


def _over_call_limit(settings: Settings) -> str:
    return (
        f"not run: the limit of {settings.tools.max_calls_per_reply} tool calls in one reply "
        "(setting tools.max_calls_per_reply) was reached; answer with what you have, "
        "or ask the user to continue"
    )


def _stop_of(turn: TurnResult) -> AgentStop:
    if turn.error is not None:
        return "error"
    if turn.message.stop_reason in ("length", "interrupted", "error"):
        return "incomplete"
    return "answered"
