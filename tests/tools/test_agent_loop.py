"""The tool loop through the fake provider and the real clients: calls run,
results go back, the model answers; rounds, the step limit, bad arguments,
approval, cancellation."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from fake_provider import MalformedToolJson, Reply, ToolCall

from core.chat.events import ToolChanged
from core.tools import Approval, Tool, ToolOutput
from core.tools.outcome import ToolOutcome, saved_outcomes
from storage import SqliteStore
from tests.tools.conftest import Agent, last_results, roles, unpaired_calls

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@pytest.mark.parametrize("wire", ["anthropic", "litellm"])
async def test_tool_call_then_result_then_final_answer(agent: Agent, wire: str) -> None:
    agent.wire = wire
    agent.fake.script(
        Reply(text="Let me look.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="The notes say hello."),
    )
    result = await agent.ask("What do my notes say?")

    assert result.stop == "answered" and result.steps == 1
    assert result.message.text == "The notes say hello."
    assert len(agent.fake.requests) == 2
    assert set(agent.tool_names(0)) == {
        "read_file",
        "list_directory",
        "search_text",
        "write_file",
        "run_command",
    }
    assert all(WIRE_NAME.match(n) for n in agent.tool_names(0))
    [sent] = agent.tool_results(1)
    assert not sent["is_error"]
    assert "hello" in sent["text"] and "world" in sent["text"]
    assert roles(agent.session) == ["user", "assistant", "tool_result", "assistant"]
    call = agent.session.messages()[1].tool_calls[0]
    assert last_results(agent.session).tool_results[0].tool_call_id == call.id
    states = [s for (_, name, s) in agent.activity if name == "read_file"]
    assert states == ["pending", "running", "done"]


async def test_several_rounds_with_concurrent_reads(agent: Agent, work: Path) -> None:
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("def main():\n    return 42\n")
    agent.fake.script(
        Reply(
            tool_calls=[
                ToolCall("list_directory", {"path": "."}),
                ToolCall("read_file", {"path": "notes.txt", "start_line": 2}),
            ]
        ),
        Reply(tool_calls=[ToolCall("search_text", {"pattern": r"return \d+", "glob": "*.py"})]),
        Reply(text="main returns 42."),
    )
    result = await agent.ask("Explore")

    assert result.stop == "answered" and result.steps == 2
    assert roles(agent.session) == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "tool_result",
        "assistant",
    ]
    first = agent.tool_results(1)
    assert len(first) == 2
    assert "notes.txt" in first[0]["text"] and "src/" in first[0]["text"]
    assert "world" in first[1]["text"] and "hello" not in first[1]["text"]
    [search] = agent.tool_results(2)[2:]
    assert "src/app.py:2:     return 42" in search["text"]


async def test_step_limit_gives_a_clear_final_state(agent: Agent, store: SqliteStore) -> None:
    agent.with_settings(max_tool_steps=2)
    agent.fake.script(
        *[Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]) for _ in range(3)]
    )
    result = await agent.ask("Loop forever")

    assert result.stop == "step_limit" and result.steps == 2
    assert len(agent.fake.requests) == 3
    [unrun] = last_results(agent.session).tool_results
    assert unrun.is_error and "limit of 2 tool steps" in unrun.text
    assert await unpaired_calls(store, agent.session.id) == []
    assert agent.activity.count(("toolu_0000", "read_file", "running")) == 2


async def test_bad_arguments_become_error_results_and_nothing_runs(agent: Agent) -> None:
    ran: list[dict] = []

    async def record(arguments, ctx):
        ran.append(arguments)
        return "ran"

    agent.registry.add(
        Tool(
            "probe",
            "Records its calls.",
            {
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 1}},
                "required": ["n"],
                "additionalProperties": False,
            },
            record,
        )
    )
    agent.fake.script(
        Reply(
            tool_calls=[
                ToolCall("probe", {"n": "three"}),
                ToolCall("probe", {}),
                ToolCall("probe", {"n": 0, "extra": True}),
                ToolCall("probe", '{"n": 1,'),
                ToolCall("probe", "[1, 2]"),
                ToolCall("no_such_tool", {}),
                ToolCall("probe", {"n": 2}),
            ]
        ),
        Reply(text="ok"),
    )
    result = await agent.ask("go")

    assert result.stop == "answered"
    assert ran == [{"n": 2}], "only the valid call ran"
    sent = agent.tool_results(1)
    assert [r["is_error"] for r in sent] == [True] * 6 + [False]
    assert "'three' is not of type 'integer'" in sent[0]["text"] and "at 'n'" in sent[0]["text"]
    assert "'n' is a required property" in sent[1]["text"]
    assert "0 is less than the minimum of 1" in sent[2]["text"]
    assert "Additional properties are not allowed ('extra' was unexpected)" in sent[2]["text"]
    assert "not valid JSON" in sent[3]["text"]
    assert "must be a JSON object, not an array" in sent[4]["text"]
    assert "unknown tool 'no_such_tool'" in sent[5]["text"] and "probe" in sent[5]["text"]
    assert all("Nothing was run" in r["text"] or "nothing was run" in r["text"] for r in sent[:5])


async def test_malformed_tool_json_from_the_stream_is_an_error_result(agent: Agent) -> None:
    agent.fake.script(MalformedToolJson(), Reply(text="sorry"))
    result = await agent.ask("read it")
    assert result.stop == "answered"
    [sent] = agent.tool_results(1)
    assert sent["is_error"] and "not valid JSON" in sent["text"]


async def test_approval_deny_once_and_session(agent: Agent, work: Path) -> None:
    agent.approver.answers = [Approval("deny", "not now"), Approval("once"), Approval("session")]
    agent.fake.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "bye\n"})]),
        Reply(
            tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "hello\nthere\n"})]
        ),
        Reply(tool_calls=[ToolCall("write_file", {"path": "new/other.txt", "content": "1\n"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "new/other.txt", "content": "2\n"})]),
        Reply(text="done"),
    )
    result = await agent.ask("edit")

    assert result.stop == "answered" and result.steps == 4
    assert len(agent.approver.asked) == 3, "the 'session' answer covers the fourth call"
    call, tool, preview = agent.approver.asked[0]
    assert tool.name == "write_file" and call.arguments["content"] == "bye\n"
    assert "--- a/notes.txt" in preview and "+++ b/notes.txt" in preview
    assert "-hello\n" in preview and "-world\n" in preview and "+bye\n" in preview
    assert "--- /dev/null" in agent.approver.asked[2][2]
    denied = agent.tool_results(1)[0]
    assert (
        denied["is_error"]
        and "did not allow" in denied["text"]
        and "The user said: not now" in denied["text"]
    )
    assert ("toolu_0000", "write_file", "denied") in agent.activity
    assert (work / "notes.txt").read_text() == "hello\nthere\n"
    assert (work / "new" / "other.txt").read_text() == "2\n"


async def test_without_an_approver_side_effects_are_denied(agent: Agent, work: Path) -> None:
    agent.fake.script(
        Reply(tool_calls=[ToolCall("run_command", {"command": "touch made"})]),
        Reply(text="ok"),
    )
    await agent.ask("make", approve=None)
    [sent] = agent.tool_results(1)
    assert sent["is_error"] and "needs the user's approval" in sent["text"]
    assert not (work / "made").exists()


async def test_refused_path_fails_before_asking(agent: Agent, tmp_path: Path) -> None:
    agent.fake.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "../escape.txt", "content": "x"})]),
        Reply(text="ok"),
    )
    await agent.ask("escape")
    assert agent.approver.asked == []
    [sent] = agent.tool_results(1)
    assert sent["is_error"] and "refused" in sent["text"] and "'..' leads outside" in sent["text"]
    assert not (tmp_path / "escape.txt").exists()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_cancel_during_tool_execution_saves_every_call_with_a_result(
    agent: Agent, store: SqliteStore, tmp_path: Path, work: Path
) -> None:
    agent.fake.script(
        Reply(
            text="Working.",
            tool_calls=[
                ToolCall("read_file", {"path": "notes.txt"}),
                ToolCall("run_command", {"command": "echo $$ > shell.pid; sleep 30"}),
                ToolCall("write_file", {"path": "later.txt", "content": "never"}),
            ],
        )
    )
    started = asyncio.Event()
    task = asyncio.create_task(
        agent.ask(
            "run it",
            emit=lambda e: (
                isinstance(e, ToolChanged)
                and e.activity.name == "run_command"
                and e.activity.state == "running"
                and started.set()
            ),
        )
    )
    await asyncio.wait_for(started.wait(), 10)
    for _ in range(200):
        if (work / "shell.pid").exists() and (work / "shell.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await unpaired_calls(store, agent.session.id) == []
    reopened = await SqliteStore.open(tmp_path / "tangents.db")
    try:
        assert await unpaired_calls(reopened, agent.session.id) == []
        info = await reopened.get_session(agent.session.id)
        path = await reopened.path(info.leaf_id)
    finally:
        await reopened.close()
    assert [e.message.role for e in path] == ["user", "assistant", "tool_result"]
    read, command, write = path[-1].message.tool_results
    assert not read.is_error and "hello" in read.text
    assert command.is_error and "cancelled" in command.text
    assert write.is_error and "not run" in write.text
    assert not (work / "later.txt").exists()
    assert not _alive(int((work / "shell.pid").read_text()))


async def test_cancel_while_waiting_for_approval(agent: Agent, store: SqliteStore) -> None:
    asking = asyncio.Event()

    async def never(call, tool, preview):
        asking.set()
        await asyncio.sleep(60)

    agent.fake.script(Reply(tool_calls=[ToolCall("write_file", {"path": "a.txt", "content": "a"})]))
    task = asyncio.create_task(agent.ask("write", approve=never))
    await asyncio.wait_for(asking.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await unpaired_calls(store, agent.session.id) == []
    [result] = last_results(agent.session).tool_results
    assert result.is_error and "not run" in result.text


async def test_a_tool_that_raises_gives_an_error_result(agent: Agent) -> None:
    async def broken(arguments, ctx) -> ToolOutput:
        raise RuntimeError("kaput")

    agent.registry.add(Tool("broken", "Always fails.", {"type": "object"}, broken))
    agent.fake.script(Reply(tool_calls=[ToolCall("broken", {})]), Reply(text="ok"))
    result = await agent.ask("try")
    assert result.stop == "answered"
    [sent] = agent.tool_results(1)
    assert sent["is_error"] and "RuntimeError: kaput" in sent["text"]


async def test_without_a_registry_no_tools_are_sent(agent: Agent) -> None:
    from core.chat.agent import run_agent
    from core.sessions.messages import user_text

    agent.fake.script(Reply(text="plain"))
    await agent.session.append(user_text("hi"))
    result = await run_agent(agent.session, agent.settings, model=agent.model, target=agent.target)
    assert result.stop == "answered" and "tools" not in agent.body()


async def test_read_only_calls_run_together_side_effects_one_at_a_time(agent: Agent) -> None:
    b_ran = asyncio.Event()
    log: list[str] = []

    async def wait_for_b(arguments, ctx) -> str:
        await asyncio.wait_for(
            b_ran.wait(), 5
        )  # deadlocks (times out) unless run concurrently with set_b
        return "a saw b"

    async def set_b(arguments, ctx) -> str:
        b_ran.set()
        return "b"

    async def effect(arguments, ctx) -> str:
        log.append(f"start {arguments['n']}")
        await asyncio.sleep(0.05)
        log.append(f"end {arguments['n']}")
        return "ok"

    schema = {"type": "object"}
    agent.registry.add(Tool("wait_for_b", "", schema, wait_for_b))
    agent.registry.add(Tool("set_b", "", schema, set_b))
    agent.registry.add(Tool("effect", "", schema, effect, side_effects=True))
    agent.fake.script(
        Reply(
            tool_calls=[
                ToolCall("wait_for_b", {}),
                ToolCall("set_b", {}),
                ToolCall("effect", {"n": 1}),
                ToolCall("effect", {"n": 2}),
            ]
        ),
        Reply(text="ok"),
    )
    await agent.ask("go")
    sent = agent.tool_results(1)
    assert [r["text"] for r in sent] == ["a saw b", "b", "ok", "ok"]
    assert log == ["start 1", "end 1", "start 2", "end 2"]


async def test_a_reply_cut_off_at_the_token_limit_does_not_run_its_calls(
    agent: Agent, store: SqliteStore
) -> None:
    agent.fake.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})], stop_reason="max_tokens")
    )
    result = await agent.ask("read")
    assert result.stop == "incomplete" and result.steps == 0
    [unrun] = last_results(agent.session).tool_results
    assert unrun.is_error and "output token limit" in unrun.text
    assert await unpaired_calls(store, agent.session.id) == []
    assert [s for (_, _, s) in agent.activity] == [], "no card: the call never became a tool run"


async def test_cancel_while_a_tool_call_streams(agent: Agent, store: SqliteStore) -> None:
    from fake_provider import Stall

    from core.providers.base import ToolCallDelta

    streaming = asyncio.Event()
    agent.fake.script(
        Stall(
            30,
            after_chunks=5,
            reply=Reply(
                tool_calls=[ToolCall("write_file", {"path": "a.txt", "content": "x" * 40})],
                chunk_size=4,
            ),
        )
    )
    task = asyncio.create_task(
        agent.ask("write", emit=lambda e: isinstance(e, ToolCallDelta) and streaming.set())
    )
    await asyncio.wait_for(streaming.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await unpaired_calls(store, agent.session.id) == []
    assistant, results = agent.session.messages()[-2:]
    assert assistant.stop_reason == "aborted" and assistant.tool_calls
    assert results.tool_results[0].is_error and "stopped the reply" in results.tool_results[0].text


async def test_each_round_records_how_its_calls_ended_and_is_announced(
    agent: Agent, store: SqliteStore
) -> None:
    agent.approver.answers = [Approval("deny", "no")]
    agent.fake.script(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": "notes.txt"}),
                ToolCall("read_file", {"path": "missing.txt"}),
            ]
        ),
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "x\n"})]),
        Reply(text="ok"),
    )
    rounds: list[tuple[str, ...]] = []

    def saved(entries) -> None:
        assert agent.session.path[-1].id == entries[-1].id, "announced once saved"
        rounds.append(tuple(e.message.role for e in entries))

    agent.session.on_append(saved)
    await agent.ask("go")

    assert rounds == [
        ("user",),
        ("assistant", "tool_result"),
        ("assistant", "tool_result"),
        ("assistant",),
    ]
    reopened = [
        e.message
        for e in await store.entries(agent.session.id)
        if e.message and e.message.role == "tool_result"
    ]
    first, second = (saved_outcomes(m) for m in reopened)
    read_ok, read_missing = (first[r.tool_call_id] for r in reopened[0].tool_results)
    assert read_ok.state == "done" and read_ok.seconds is not None and read_ok.seconds >= 0
    assert read_missing.state == "error" and read_missing.seconds is not None
    [denied] = second.values()
    assert denied == ToolOutcome("denied", None)


def test_outcomes_fall_back_to_is_error_without_meta() -> None:
    from core.sessions.content import TextContent, ToolResultContent
    from core.sessions.messages import Message

    message = Message(
        role="tool_result",
        content=(
            ToolResultContent("a", (TextContent("x"),)),
            ToolResultContent("b", (TextContent("y"),), is_error=True),
        ),
        meta={"tool_outcomes": {"a": {"state": "bogus", "seconds": -1}}},
    )
    assert saved_outcomes(message) == {"a": ToolOutcome("done"), "b": ToolOutcome("error")}
