"""Issue 35, the round table's pure parts: who a message addresses, and how a
path sounds to the agent asked (Tomori's rule)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.chat.addressing import addressed
from core.providers.assemble import MessageBuilder
from core.providers.base import TextDelta
from core.sessions.content import TextContent, ThinkingContent, ToolCallContent, ToolResultContent
from core.sessions.context import SUMMARY_PREFIX, build_context
from core.sessions.entries import Compaction
from core.sessions.messages import Message
from core.sessions.speakers import Speaker
from core.settings import Agent, ConfigError, load_settings
from tests.core.test_context import chain, user

CRITIC = Agent("Critic", "lab/critic", system="You judge.")
POET = Agent("Poet", "lab/poet", system="You rhyme.")
AGENTS = (CRITIC, POET)


def names(text: str) -> list[str]:
    return [agent.name for agent in addressed(text, AGENTS).agents]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@Critic is this good?", ["Critic"]),
        ("is this good? @poet @CRITIC", ["Poet", "Critic"]),
        ("@Critic then @Critic again", ["Critic"]),
        ("@all go", ["Critic", "Poet"]),
        ("@Poet first, then @all", ["Poet", "Critic"]),
        ("no names here", []),
        ("mail me@critic.org", []),
        ("@Critics are not @Critic-", ["Critic"]),
    ],
)
def test_who_a_message_addresses(text: str, expected: list[str]) -> None:
    assert names(text) == expected


def test_an_unknown_name_is_left_as_text_and_said_once() -> None:
    asked = addressed("@Nobody and @Poet and @Nobody", AGENTS)
    assert [a.name for a in asked.agents] == ["Poet"]
    assert asked.unknown == ("Nobody",)
    assert asked.note == "no agent called @Nobody: left as text (agents are set in [[agents]])"
    assert addressed("@Poet", AGENTS).note is None
    assert addressed("@all", ()).unknown == ("all",)


def reply(text: str, agent: str | None, *extra, model: str = "lab/critic") -> Message:
    content = (*extra, TextContent(text))
    return Message(role="assistant", content=content, model=model, stop_reason="stop", agent=agent)


def test_the_asked_agent_hears_itself_as_assistant_and_the_others_as_named_users() -> None:
    call = ToolCallContent("c1", "read_file", {}, "{}")
    path = chain(
        Message(role="system", content=(TextContent("the session's prompt"),)),
        user("@Critic @Poet judge this"),
        reply("Too long.", "Critic", ThinkingContent("hm", signature="sig")),
        Message(
            role="assistant",
            content=(ThinkingContent("mine"), TextContent("Let me look."), call),
            model="lab/poet",
            stop_reason="tool_use",
            agent="Poet",
        ),
        Message(role="tool_result", content=(ToolResultContent("c1", (TextContent("x"),)),)),
        reply("Short and sweet.", "Poet", model="lab/poet"),
        reply("Plain answer.", None, model="lab/session"),
        user("@Critic again"),
    )
    heard = build_context(
        path, "lab/critic", speaker=Speaker("Critic", "Ana", "You judge."), default_thinking="low"
    )
    assert (heard.model, heard.thinking, heard.system) == ("lab/critic", "low", "You judge.")
    assert [m.role for m in heard.messages] == ["user", "assistant", "user"]
    assert heard.messages[0].content == (TextContent("Ana: @Critic @Poet judge this"),)
    assert heard.messages[1].content[0] == ThinkingContent("hm", signature="sig")
    assert [b.text for b in heard.messages[2].content if isinstance(b, TextContent)] == [
        "Poet: Let me look.",
        "[Poet used tools: read_file]",
        "Poet: Short and sweet.",
        "lab/session: Plain answer.",
        "Ana: @Critic again",
    ]
    assert not any(
        isinstance(b, ThinkingContent | ToolResultContent) for b in heard.messages[2].content
    )


def test_the_session_model_hears_agents_as_named_users_and_its_own_replies_as_assistant() -> None:
    path = chain(
        user("hello"),
        reply("Hi.", None, model="lab/session"),
        user("@Poet your turn"),
        reply("A rhyme.", "Poet", model="lab/poet"),
        user("and you?"),
    )
    heard = build_context(path, "lab/session", speaker=Speaker())
    assert [m.role for m in heard.messages] == ["user", "assistant", "user"]
    assert [b.text for b in heard.messages[2].content] == [
        "@Poet your turn",
        "Poet: A rhyme.",
        "and you?",
    ]


def test_a_path_without_agents_is_sent_as_before_even_with_a_user_name() -> None:
    path = chain(user("hello"), reply("Hi.", None), user("more"))
    plain = build_context(path, "lab/critic")
    named = build_context(path, "lab/critic", speaker=Speaker(None, "Ana"))
    assert named.messages == plain.messages


def test_a_compaction_summary_is_no_speaker() -> None:
    path = chain(
        user("one"),
        reply("r1", "Poet"),
        Compaction("Ana asked; Poet: r1", first_kept_id=None, tokens_before=500),
        user("two"),
    )
    [message] = build_context(path, "lab/critic", speaker=Speaker("Critic", "Ana")).messages
    texts = [b.text for b in message.content if isinstance(b, TextContent)]
    assert texts[0].startswith(SUMMARY_PREFIX) and texts[1] == "Ana: two"


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_agents_in_the_config_are_checked_one_line_a_problem(tmp_path: Path) -> None:
    path = config(
        tmp_path,
        'user_name = "Ana"\n'
        '[[agents]]\nname = "Critic"\nmodel = "lab/critic"\nthinking = "low"\n'
        'note = "be brief"\nnote_depth = 2\ncolor = "red"\n'
        '[[agents]]\nname = "Poet"\nmodel = "lab/poet"\n',
    )
    settings = load_settings(path)
    assert settings.user_name == "Ana"
    assert [(a.name, a.model, a.thinking, a.note_depth) for a in settings.agents] == [
        ("Critic", "lab/critic", "low", 2),
        ("Poet", "lab/poet", "off", 4),
    ]
    bad = config(
        tmp_path,
        '[[agents]]\nname = "critic"\nmodel = "a"\n'
        '[[agents]]\nname = "CRITIC"\nmodel = "b"\n'
        '[[agents]]\nname = "all"\nmodel = "c"\n'
        '[[agents]]\nname = "two words"\nmodel = "d"\n'
        '[[agents]]\nname = "Poet"\nthinking = "lots"\n',
    )
    with pytest.raises(ConfigError) as raised:
        load_settings(bad)
    assert [line.split(": ", 1)[1] for line in raised.value.lines] == [
        'agents[4].thinking: must be one of off, low, medium, high, not "lots"',
        "agents[4].model: missing",
        "agents[1].name: 'CRITIC' is already the name of an agent",
        "agents[2].name: 'all' is taken: @all asks every agent",
        "agents[3].name: must start with a letter and hold only letters, digits, _ or - (at most 32)",
    ]


def test_a_reply_checkpoint_keeps_its_author() -> None:
    """A process killed mid-reply leaves a snapshot that is recovered as an
    entry: the agent writing it is part of it from the first chunk."""
    builder = MessageBuilder("lab/critic", "openai", "Critic")
    builder.add(TextDelta("Too"))
    assert builder.snapshot("the process ended").agent == "Critic"
    assert builder.finish_aborted().agent == "Critic"
