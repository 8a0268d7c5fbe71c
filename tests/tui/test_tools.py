"""The agent loop in the chat screen: tool cards, the approval dialog, Esc
while a command runs, the step limit, and approvals forgotten on request.
Through the fake provider (litellm's OpenAI wire) and a real SQLite file."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from pathlib import Path

import pytest
from fake_provider import MalformedToolJson, Reply, ToolCall

from core.settings import McpServer, ToolSettings
from tests.tui.helpers import (
    app_of,
    notifications,
    running,
    screen_text,
    send,
    settle,
    type_text,
    wait_for,
)
from tui.screens.approval import ApprovalScreen
from tui.widgets.tool_call_card import ToolCallCard


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The directory the app is started in (the tools' working directory)."""
    directory = tmp_path / "work"
    directory.mkdir()
    (directory / "notes.txt").write_text("hello\nworld\n")
    monkeypatch.chdir(directory)
    return directory


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[ApprovalScreen]:
    """Every approval dialog opened."""
    opened: list[ApprovalScreen] = []
    original = ApprovalScreen.__init__

    def init(self: ApprovalScreen, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(ApprovalScreen, "__init__", init)
    return opened


async def ask(pilot, text: str) -> None:
    """Send a message without waiting for the reply (it may wait for approval)."""
    await type_text(pilot, text)
    await pilot.press("enter")


async def approval(pilot) -> ApprovalScreen:
    await wait_for(lambda: isinstance(pilot.app.screen, ApprovalScreen), pilot, timeout=15)
    await pilot.pause()
    return pilot.app.screen  # type: ignore[return-value]


def cards(pilot) -> list[ToolCallCard]:
    """The cards on the chat screen (under the approval dialog, if one is open)."""
    return list(pilot.app.screen_stack[0].query(ToolCallCard))


def card_view(pilot) -> list[tuple[str, str | None, str, str, bool, bool]]:
    """What each card shows: name, state, title, result, error / denied look."""
    return [
        (
            c.tool_name,
            c.state,
            str(c.border_title),
            c.result_text,
            c.has_class("-error"),
            c.has_class("-denied"),
        )
        for c in cards(pilot)
    ]


async def rebuilt_view(pilot) -> list[tuple[str, str | None, str, str, bool, bool]]:
    """The cards after showing the saved path anew."""
    screen = pilot.app.screen
    await screen.chat_view.set_entries(screen.session.path)
    await settle(pilot)
    return card_view(pilot)


def path_messages(pilot):
    return [e.message for e in app_of(pilot).conversation.session.path if e.message is not None]


def unanswered_calls(pilot) -> list[str]:
    """Tool calls on the path with no result in the message right after them."""
    messages = path_messages(pilot)
    missing = []
    for message, following in zip(messages, messages[1:] + [None], strict=False):
        if message.role != "assistant" or not message.tool_calls:
            continue
        answered = (
            {r.tool_call_id for r in following.tool_results} if following is not None else set()
        )
        missing += [c.id for c in message.tool_calls if c.id not in answered]
    return missing


def sent_tool_results(fake_provider, index: int = -1) -> list[str]:
    """The tool results a request carried (OpenAI wire: ``role: tool`` messages)."""
    body = fake_provider.requests[index].body
    return [
        m["content"] if isinstance(m["content"], str) else str(m["content"])
        for m in body["messages"]
        if m.get("role") == "tool"
    ]


async def test_read_only_tools_run_without_asking_over_several_rounds(
    fake_provider, fake_args, work, asked
) -> None:
    fake_provider.script(
        Reply(text="Let me look.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[ToolCall("list_directory", {"path": "."})]),
        Reply(text="The notes say hello world."),
    )
    async with running(fake_args) as pilot:
        await send(pilot, "What do my notes say?")

        assert asked == []
        assert [m.role for m in path_messages(pilot)] == [
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "tool_result",
            "assistant",
        ]
        assert len(fake_provider.requests) == 3
        assert "hello" in sent_tool_results(fake_provider, 1)[0]
        assert "notes.txt" in sent_tool_results(fake_provider, 2)[1]
        shown = card_view(pilot)
        assert [(name, state) for name, state, *_ in shown] == [
            ("read_file", "done"),
            ("list_directory", "done"),
        ]
        assert all("✓" in title and " s" in title for _, _, title, *_ in shown), shown
        assert "hello" in shown[0][3]
        assert "The notes say hello world." in screen_text(pilot)
        assert await rebuilt_view(pilot) == shown


async def test_write_file_shows_the_diff_and_runs_once_allowed(
    fake_provider, fake_args, work, asked
) -> None:
    fake_provider.script(
        Reply(
            tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "hello\nthere\n"})]
        ),
        Reply(text="Updated."),
    )
    async with running(fake_args) as pilot:
        await ask(pilot, "Change my notes")
        dialog = await approval(pilot)
        await wait_for(lambda: [c.state for c in cards(pilot)] == ["pending"], pilot, timeout=15)
        [card] = cards(pilot)
        assert "waiting for approval" in str(card.border_title)
        assert (work / "notes.txt").read_text() == "hello\nworld\n"
        preview = str(dialog.query_one("#approval-preview").render())
        assert "-world" in preview and "+there" in preview and " hello" in preview
        assert '"content": "hello\\nthere\\n"' in str(
            dialog.query_one("#approval-arguments").render()
        )
        await pilot.press("y")
        await settle(pilot)

        assert (work / "notes.txt").read_text() == "hello\nthere\n"
        [(name, state, title, result, is_error, denied)] = card_view(pilot)
        assert (name, state, is_error, denied) == ("write_file", "done", False, False)
        assert "replaced notes.txt" in result
        assert "Updated." in screen_text(pilot)
        assert await rebuilt_view(pilot) == [(name, state, title, result, is_error, denied)]


async def test_allow_for_the_session_until_another_session_is_opened(
    fake_provider, fake_args, work, asked
) -> None:
    fake_provider.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "a.txt", "content": "a\n"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "b.txt", "content": "b\n"})]),
        Reply(text="Both written."),
        Reply(tool_calls=[ToolCall("write_file", {"path": "c.txt", "content": "c\n"})]),
        Reply(text="Written."),
    )
    async with running(fake_args) as pilot:
        await ask(pilot, "Write two files")
        await approval(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert len(asked) == 1, "the second write_file was not asked"
        assert (work / "a.txt").exists() and (work / "b.txt").exists()

        first = app_of(pilot).conversation.session.id
        await pilot.press("ctrl+n")  # a new session: its tools ask again
        await settle(pilot)
        assert app_of(pilot).conversation.session.id != first
        await ask(pilot, "One more")
        await approval(pilot)
        assert len(asked) == 2
        assert not (work / "c.txt").exists()
        await pilot.press("y")
        await settle(pilot)
        assert (work / "c.txt").read_text() == "c\n"


async def test_deny_with_a_message_reaches_the_model(fake_provider, fake_args, work, asked) -> None:
    fake_provider.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "gone\n"})]),
        Reply(text="Understood, I will not."),
    )
    async with running(fake_args) as pilot:
        await ask(pilot, "Overwrite my notes")
        await approval(pilot)
        await pilot.press("n")
        await type_text(pilot, "keep them")
        await pilot.press("enter")
        await settle(pilot)

        assert (work / "notes.txt").read_text() == "hello\nworld\n"
        [denial] = sent_tool_results(fake_provider)
        assert "did not allow" in denial and "keep them" in denial
        [(name, state, title, result, is_error, denied)] = card_view(pilot)
        assert state == "denied" and denied and not is_error and "denied" in title
        assert await rebuilt_view(pilot) == [(name, state, title, result, is_error, denied)]


async def test_escape_stops_a_running_command_and_kills_its_children(
    fake_provider, fake_args, work, asked
) -> None:
    fake_provider.script(
        Reply(
            tool_calls=[
                ToolCall("run_command", {"command": "sleep 30 & echo $! > child.pid; wait"})
            ]
        ),
        Reply(text="never asked"),
        Reply(text="Still here."),
    )
    async with running(fake_args) as pilot:
        await ask(pilot, "Run it")
        await approval(pilot)
        await pilot.press("y")
        await wait_for(
            lambda: (work / "child.pid").exists() and (work / "child.pid").read_text().strip(),
            pilot,
            timeout=15,
        )
        await wait_for(lambda: [c.state for c in cards(pilot)] == ["running"], pilot, timeout=15)
        assert "running" in str(cards(pilot)[0].border_title)
        child = int((work / "child.pid").read_text())
        await pilot.press("escape")
        await settle(pilot)

        assert not pilot.app.screen.replying
        assert unanswered_calls(pilot) == []
        [(name, state, title, result, is_error, _)] = card_view(pilot)
        assert state == "error" and is_error and "cancelled" in result
        assert len(fake_provider.requests) == 1, "the loop stopped"
        await wait_for(lambda: not _alive(child), pilot, timeout=5)
        assert await rebuilt_view(pilot) == [(name, state, title, result, is_error, False)]

        await send(pilot, "Are you there?")
        assert (
            path_messages(pilot)[-1].text == "never asked"
        )  # the next scripted reply: the app still answers


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_step_limit_shows_a_notice(fake_provider, fake_args, work, asked) -> None:
    fake_provider.script(
        *[Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]) for _ in range(3)]
    )
    async with running(fake_args) as pilot:
        conversation = app_of(pilot).conversation
        conversation.settings = dataclasses.replace(conversation.settings, max_tool_steps=2)
        await send(pilot, "Loop")

        assert len(fake_provider.requests) == 3
        assert any("Stopped after 2 tool steps" in n for n in notifications(pilot))
        assert unanswered_calls(pilot) == []
        states = [state for _, state, *_ in card_view(pilot)]
        assert states == ["done", "done", "error"]


async def test_malformed_tool_arguments_give_an_error_card(
    fake_provider, fake_args, work, asked
) -> None:
    fake_provider.script(MalformedToolJson(), Reply(text="Sorry, let me fix that."))
    async with running(fake_args) as pilot:
        await send(pilot, "Read my notes")

        [error] = sent_tool_results(fake_provider)
        assert "not valid JSON" in error
        [(name, state, title, result, is_error, _)] = card_view(pilot)
        assert (name, state, is_error) == ("read_file", "error", True) and "✗ error" in title
        assert "Sorry, let me fix that." in screen_text(pilot)
        assert await rebuilt_view(pilot) == [(name, state, title, result, is_error, False)]


async def test_escape_in_the_dialog_denies_without_a_message(
    fake_provider, fake_args, work, asked
) -> None:
    fake_provider.script(
        Reply(tool_calls=[ToolCall("run_command", {"command": "touch ran.txt"})]),
        Reply(text="Fine."),
    )
    async with running(fake_args) as pilot:
        await ask(pilot, "Touch a file")
        await approval(pilot)
        await pilot.press("escape")
        await settle(pilot)

        assert not (work / "ran.txt").exists()
        [denial] = sent_tool_results(fake_provider)
        assert "did not allow" in denial and "The user said" not in denial
        assert [state for _, state, *_ in card_view(pilot)] == ["denied"]


async def test_mcp_servers_start_at_first_use_ask_for_approval_and_stop_on_exit(
    fake_provider, fake_args, work, asked
) -> None:
    server = Path(__file__).parents[1] / "tools" / "mcp_echo_server.py"
    fake_provider.script(
        Reply(tool_calls=[ToolCall("echo__echo", {"text": "hi there"})]),
        Reply(text="It echoed."),
    )
    async with running(fake_args) as pilot:
        app = app_of(pilot)
        app.conversation.settings = dataclasses.replace(
            app.conversation.settings,
            mcp_servers=(McpServer("echo", command=sys.executable, args=(str(server),)),),
            tools=ToolSettings(mcp_ready_wait=60),  # its tools in the first request, however slow
        )
        registry = app.tool_registry
        assert registry.mcp_status() == [("echo", "stopped", None)], "not started at launch"

        await ask(pilot, "Echo something")
        dialog = await approval(pilot)
        assert dialog.tool.name == "echo.echo"
        assert registry.mcp_status() == [("echo", "running", None)]
        await pilot.press("y")
        await settle(pilot)
        assert sent_tool_results(fake_provider) == ["echo: hi there"]
    assert registry.mcp_status() == [("echo", "stopped", None)], "stopped when the app exited"


async def test_escape_stops_a_catastrophic_search(fake_provider, fake_args, work) -> None:
    """``search_text`` runs without approval, so a file the model reads can ask
    for a pattern Python's ``re`` would spin on for hours: Esc still works and
    the search process is gone."""
    import core.tools.builtin as builtin
    from tests.tools.test_search_hostile import EVIL, children_running

    (work / "evil.txt").write_text("a" * 40 + "b\n")
    fake_provider.script(Reply(tool_calls=[ToolCall("search_text", {"pattern": EVIL})]))
    async with running(fake_args) as pilot:
        await ask(pilot, "Search it")
        await wait_for(lambda: children_running(builtin.SEARCH_WORKER) != [], pilot, timeout=15)
        await pilot.press("escape")
        await settle(pilot)

        assert not pilot.app.screen.replying
        [(_, state, _, result, is_error, _)] = card_view(pilot)
        assert state == "error" and is_error and "cancelled" in result
        assert children_running(builtin.SEARCH_WORKER) == []


async def test_mcp_servers_start_at_launch_and_a_silent_one_delays_no_reply(
    fake_provider, fake_args, work, tmp_path
) -> None:
    """A server configured at launch starts with the app, before anything is
    typed; once its ready wait is over, a reply does not wait for it."""
    from tests.tools.procs import still_alive, wait_for_pids

    hostile = Path(__file__).parents[1] / "tools" / "hostile_server.py"
    pidfile = tmp_path / "hang.pids"
    config = tmp_path / "hang.toml"
    config.write_text(
        "[tools]\nmcp_ready_wait = 0.5\n[[mcp_servers]]\n"
        f'name = "hang"\ncommand = "{sys.executable}"\nargs = ["{hostile}", "hang", "{pidfile}"]\n'
    )
    async with running([*fake_args, "--config", str(config)]) as pilot:
        registry = app_of(pilot).tool_registry
        pids = await asyncio.to_thread(wait_for_pids, pidfile)
        assert registry.mcp_status() == [("hang", "starting", None)], "started at launch"
        await wait_for(lambda: registry.mcp_wait_left() == 0, pilot, timeout=15)

        await send(pilot, "hello")
        assert fake_provider.requests, "the reply was asked for"
        assert "still starting" in " ".join(notifications(pilot))
    assert still_alive(pids, 10.0) == [], "stopped when the app exited"


async def test_a_reply_stopped_while_asking_closes_the_dialog(
    fake_provider, fake_args, work, asked
) -> None:
    fake_provider.script(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "x\n"})])
    )
    async with running(fake_args) as pilot:
        await ask(pilot, "Change my notes")
        await approval(pilot)
        chat = pilot.app.screen_stack[0]
        chat.action_stop()  # what Esc does in the chat; here the reply is stopped from outside the dialog
        await settle(pilot)

        assert pilot.app.screen is chat and not chat.replying
        assert unanswered_calls(pilot) == []
        assert (work / "notes.txt").read_text() == "hello\nworld\n"
        assert [state for _, state, *_ in card_view(pilot)] == ["error"]
