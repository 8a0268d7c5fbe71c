"""The offline demo model."""

from __future__ import annotations

import json

from core.providers.assemble import MessageBuilder
from core.providers.base import ChatRequest, Done, TextDelta, ThinkingDelta, UsageEvent
from core.providers.demo import DEFAULT_DELAY, LABEL, DemoProvider
from core.providers.registry import get_provider
from core.sessions.content import TextContent, ToolResultContent
from core.sessions.messages import Message, user_text


async def run(*messages: Message, provider: DemoProvider | None = None, model: str = "demo"):
    provider = provider or DemoProvider(delay=0)
    request = ChatRequest(model=model, messages=messages)
    builder = MessageBuilder("demo", provider.name)
    events = []
    async for event in provider.stream(request):
        events.append(event)
        builder.add(event)
    return events, builder.finish()


async def test_streams_thinking_then_markdown():
    events, message = await run(user_text("hello demo"))
    assert isinstance(events[0], ThinkingDelta)
    assert len([e for e in events if isinstance(e, TextDelta)]) > 20
    assert isinstance(events[-1], Done) and events[-1].stop_reason == "stop"
    assert message.thinking and message.thinking[0].text
    text = message.text
    assert text.startswith("## ")
    assert "\n- " in text
    assert "```python\n" in text and text.rstrip().endswith("```")
    assert 'You said: "hello demo"' in text
    assert LABEL in text


async def test_usage_is_free():
    events, message = await run(user_text("cost?"))
    (usage,) = [e.usage for e in events if isinstance(e, UsageEvent)]
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.cost == 0


async def test_replies_are_deterministic():
    first = await run(user_text("same"))
    second = await run(user_text("same"))
    assert first == second


async def test_mentioning_tool_streams_a_list_directory_call_then_answers():
    """It read README.md, which fails outside a folder that has one (issue 33)."""
    _, message = await run(user_text("please use a tool"))
    assert message.stop_reason == "tool_use"
    (call,) = message.tool_calls
    assert call.name == "list_directory"
    assert call.arguments == {"path": "."}
    assert json.loads(call.raw_arguments) == {"path": "."}

    result = Message(
        role="tool_result", content=(ToolResultContent(call.id, (TextContent("# Readme"),)),)
    )
    _, answer = await run(user_text("please use a tool"), message, result)
    assert answer.stop_reason == "stop"
    assert answer.tool_calls == []
    assert "The tool returned 8 characters" in answer.text

    denied = Message(
        role="tool_result",
        content=(
            ToolResultContent(
                call.id, (TextContent("denied: the user did not allow this call."),), True
            ),
        ),
    )
    _, answer = await run(user_text("please use a tool"), message, denied)
    assert "did not run (denied: the user did not allow this call.)" in answer.text
    assert "returned" not in answer.text


async def test_registry_serves_demo_names():
    assert isinstance(get_provider("demo"), DemoProvider)
    assert isinstance(get_provider("demo/anything"), DemoProvider)
    assert get_provider("demo").label == "demo — offline, canned replies"


async def test_later_turns_differ():
    assistant = Message(role="assistant", content=(TextContent("earlier"),))
    _, first = await run(user_text("a"))
    _, later = await run(user_text("a"), assistant, user_text("a"))
    assert first.text != later.text
    assert later.text.startswith("## Demo reply 2")


async def test_each_demo_name_answers_with_its_own_tips():
    """``/compare demo demo/other`` has differences to show, the same each time."""
    _, plain = await run(user_text("a"))
    _, other = await run(user_text("a"), model="demo/other")
    assert plain.text.startswith("## Demo reply 1\n")
    assert other.text.startswith("## Demo reply 1 from demo/other\n")
    tips = [{line for line in m.text.splitlines() if line.startswith("- ")} for m in (plain, other)]
    assert tips[0] != tips[1]
    assert (await run(user_text("a"), model="demo/other"))[1] == other


async def test_delay_is_configurable():
    assert DemoProvider().delay == DEFAULT_DELAY > 0
    events, message = await run(user_text("x"), provider=DemoProvider(delay=0.0005))
    assert message.stop_reason == "stop"


async def summary_of(system: str, prompt: str) -> str:
    provider = DemoProvider(delay=0)
    request = ChatRequest(model="demo", messages=(user_text(prompt),), system=system)
    builder = MessageBuilder("demo", provider.name)
    async for event in provider.stream(request):
        builder.add(event)
    message = builder.finish()
    assert not message.tool_calls
    return message.text


async def test_a_branch_summary_says_who_asked_what() -> None:
    """Issue 12: the demo's summaries read like summaries, never a tool call or an echo."""
    from core.chat.branch_summary import SYSTEM, summary_prompt

    transcript = (
        "[User]: Plan three days in Lisbon\n\n[Assistant]: ## Demo reply 1\n\nYou said...\n\n"
        "[User]: please use a tool to read the README\n\n[Assistant]: I'll read the file first."
    )
    text = await summary_of(SYSTEM, summary_prompt(transcript))
    assert "Plan three days in Lisbon" in text and "read the README" in text
    assert "The user asked" in text
    assert "You said" not in text and "Demo reply" not in text and "<branch>" not in text


async def test_a_compaction_summary_says_who_asked_what() -> None:
    from core.compaction.plan import summary_prompt
    from core.compaction.prompts import SYSTEM

    transcript = "[User]: What is a monad?\n\n[Assistant]: A monad is...\n\n[User]: And a functor?"
    text = await summary_of(SYSTEM, summary_prompt(transcript))
    assert "What is a monad?" in text and "And a functor?" in text
    assert "## Goal" in text
    assert "You said" not in text and "<conversation>" not in text


async def test_asking_to_write_a_file_calls_write_file_in_a_scratch_directory() -> None:
    _, message = await run(user_text("write a file for me"))
    assert message.stop_reason == "tool_use"
    (call,) = message.tool_calls
    assert call.name == "write_file"
    assert call.arguments["path"].startswith("tangents-demo/")
    assert "tangents-demo/" in message.text  # it names the scratch directory


async def test_asking_to_run_a_command_calls_run_command_in_the_scratch_directory() -> None:
    _, message = await run(user_text("run a command"))
    (call,) = message.tool_calls
    assert call.name == "run_command"
    assert "tangents-demo" in call.arguments["command"]


def test_the_demo_tool_call_works_in_a_folder_without_a_readme(tmp_path) -> None:
    """``tangents -p`` in an empty folder: the tool runs and the demo answers
    with what it returned, not "the tool call did not run"."""
    from tests.integration.cli import run as run_program

    folder = tmp_path / "empty"
    folder.mkdir()
    done = run_program(
        "--db",
        str(tmp_path / "t.db"),
        "-m",
        "demo",
        "-p",
        "use a tool",
        wrapper=("env", "-C", str(folder)),
    )
    assert done.returncode == 0, done.stderr
    assert "The tool returned" in done.stdout and "did not run" not in done.stdout
