"""The round table in the app (issue 35): agents asked with ``@names`` answer
in turn, each reply's header names its agent in the agent's colour."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_provider import Reply, Stall
from textual.color import Color
from textual.content import Content

from tests.tui.conftest import FAKE_KEY
from tests.tui.helpers import notifications, running, send, settle, type_text, wait_for
from tui.chat.chat_screen import ChatScreen
from tui.cli import main
from tui.widgets.assistant_message import AssistantMessage


def write_config(
    tmp_path: Path, base_url: str, critic_color: str = "#ff0000", poet_extra: str = ""
) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(
        "[[endpoints]]\n"
        'name = "lab"\n'
        f'base_url = "{base_url}/v1"\n'
        'models = ["critic-model", "poet-model"]\n'
        "[[agents]]\n"
        'name = "Critic"\n'
        'model = "lab/critic-model"\n'
        f'color = "{critic_color}"\n'
        "[[agents]]\n"
        'name = "Poet"\n'
        'model = "lab/poet-model"\n' + poet_extra
    )
    return config


def name_color(header: Content, name: str) -> Color | None:
    """The foreground of the span that covers ``name`` in ``header``."""
    start = header.plain.index(name)
    for span in header.spans:
        if span.start <= start and start + len(name) <= span.end:
            style = span.style
            return None if isinstance(style, str) else style.foreground
    return None


@pytest.fixture
def argv(fake_provider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    config = write_config(tmp_path, fake_provider.base_url)
    return ["--config", str(config), "--model", "lab/critic-model"]


async def test_both_agents_answer_under_their_names_in_their_colours(fake_provider, argv) -> None:
    fake_provider.script_for("critic-model", Reply(text="Too long."))
    fake_provider.script_for("poet-model", Reply(text="Short and sweet."))
    async with running(argv) as pilot:
        await send(pilot, "@Critic @Poet is this good?")
        asked = [r.body["model"] for r in fake_provider.requests]
        assert asked == ["critic-model", "poet-model"]
        replies = list(pilot.app.screen.query(AssistantMessage))
        headers = [reply.header_text for reply in replies]
        assert [h.split(" · ")[:2] for h in headers] == [
            ["◆ Critic", "lab/critic-model"],
            ["◆ Poet", "lab/poet-model"],
        ]
        critic, poet = (reply._header_shown for reply in replies)
        assert name_color(critic, "Critic") == Color.parse("#ff0000")
        poet_color = name_color(poet, "Poet")
        assert poet_color is not None and poet_color != Color.parse("#ff0000")


async def test_agents_lists_each_with_its_model_and_colour(fake_provider, argv) -> None:
    async with running(argv) as pilot:
        await send(pilot, "/agents")
        [listed] = [n for n in notifications(pilot) if n.startswith("Agents")]
        assert listed.splitlines()[1:] == [
            "@Critic  lab/critic-model  #FF0000",
            "@Poet  lab/poet-model  #2EC27E",
        ]


async def test_agents_lists_an_agents_own_note(fake_provider, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    extra = 'note = "Rhyme."\nnote_depth = 1\n'
    config = write_config(tmp_path, fake_provider.base_url, poet_extra=extra)
    async with running(["--config", str(config), "--model", "lab/critic-model"]) as pilot:
        await send(pilot, "/agents")
        [listed] = [n for n in notifications(pilot) if n.startswith("Agents")]
        assert listed.splitlines()[1:] == [
            "@Critic  lab/critic-model  #FF0000",
            "@Poet  lab/poet-model  #2EC27E",
            "  its note, 1 message from the end: Rhyme.",
        ]


def authors(pilot) -> list[str | None]:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    return [m.agent for m in screen.session.messages() if m.role == "assistant"]


async def test_a_round_lets_the_agents_answer_each_other(fake_provider, argv) -> None:
    fake_provider.script_for("critic-model", Reply(text="Too long."), Reply(text="Still long."))
    fake_provider.script_for("poet-model", Reply(text="Short."), Reply(text="Shorter."))
    async with running(argv) as pilot:
        await send(pilot, "@Critic @Poet is this good?")
        await send(pilot, "/round 1")
        assert authors(pilot) == ["Critic", "Poet", "Critic", "Poet"]
        headers = [r.header_text for r in pilot.app.screen.query(AssistantMessage)]
        assert [h.split(" · ")[0] for h in headers] == ["◆ Critic", "◆ Poet"] * 2
        await send(pilot, "/round 0")
        assert "Usage: /round N (1 to 20)" in notifications(pilot)[-1]
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen) and screen.prompt.text == "/round 0"
        screen.prompt.text = ""
        await send(pilot, "/status completed")
        asked = len(fake_provider.requests)
        await send(pilot, "/round 1")
        assert "is completed and takes no new messages" in notifications(pilot)[-1]
        assert len(fake_provider.requests) == asked
        assert screen.prompt.text == "/round 1", "the command comes back"


async def test_esc_stops_a_round_and_what_was_typed_goes_after(fake_provider, argv) -> None:
    fake_provider.script_for(
        "critic-model",
        Reply(text="Too long."),
        Stall(30, after_chunks=1, reply=Reply(text="Let me think about it more")),
    )
    fake_provider.script_for("poet-model", Reply(text="Short."), Reply(text="Thanks."))
    async with running(argv) as pilot:
        await send(pilot, "@Critic @Poet is this good?")
        await type_text(pilot, "/round 3")
        await pilot.press("enter")
        await wait_for(lambda: len(fake_provider.requests) == 3, pilot)
        await type_text(pilot, "@Poet your turn")
        await pilot.press("enter")
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        await wait_for(lambda: screen.compaction_status.queued == ("@Poet your turn",), pilot)
        await pilot.press("escape")
        await settle(pilot)
        asked = [r.body["model"] for r in fake_provider.requests]
        assert asked == ["critic-model", "poet-model", "critic-model", "poet-model"]
        assert authors(pilot) == ["Critic", "Poet", "Critic", "Poet"]
        stopped = [m for m in screen.session.messages() if m.role == "assistant"][2]
        assert stopped.stop_reason == "aborted"


def test_a_colour_that_is_not_one_is_refused_in_a_line(fake_provider, tmp_path, capsys) -> None:
    config = write_config(tmp_path, fake_provider.base_url, critic_color="[bold]nope")
    assert main(["--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "agents[0].color: '[bold]nope' is not a colour" in err
    assert err.count("\n") == 1


async def test_tab_completes_an_agent_name_right_after_its_at(fake_provider, argv) -> None:
    async with running(argv) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        prompt = screen.prompt
        await type_text(pilot, "ask @cr")
        await pilot.press("tab")
        assert prompt.text == "ask @Critic " and prompt.has_focus
        await type_text(pilot, "and @p")
        await pilot.press("left", "left", "tab")
        assert prompt.text == "ask @Critic and @p" and not prompt.has_focus, (
            "no @prefix: focus moves"
        )
        prompt.focus()
        await pilot.press("end", "backspace", "tab")
        assert prompt.text == "ask @Critic and @" and prompt.has_focus, "@ alone: three names"
        await type_text(pilot, "P")
        await pilot.press("tab")
        assert prompt.text == "ask @Critic and @Poet " and prompt.has_focus
