"""The footer's context colours and the session-wide totals beside the branch's."""

from __future__ import annotations

import pytest
from fake_provider import Reply
from textual.app import App, ComposeResult

from tests.tui.helpers import app_of, running, screen_text, send, settle
from tui.widgets.footer import FooterState, StatusFooter, fit_hints, totals_text


class FooterApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusFooter()


@pytest.mark.parametrize(
    ("used", "classes"),
    [(690, set()), (710, {"-context-warning"}), (910, {"-context-error"}), (None, set())],
)
async def test_context_turns_yellow_over_70_and_red_over_90_percent(used, classes) -> None:
    app = FooterApp()
    async with app.run_test(size=(100, 3)) as pilot:
        widget = app.query_one(StatusFooter)
        widget.state = FooterState(model="openai/test", context_tokens=used, window=1000)
        await pilot.pause()
        assert set(widget.classes) & {"-context-warning", "-context-error"} == classes


def test_session_totals_are_shown_only_when_other_branches_cost_something() -> None:
    one_branch = FooterState(tokens=12_300, cost=0.04, session_tokens=12_300, session_cost=0.04)
    assert totals_text(one_branch) == "12k tok · $0.0400"
    assert totals_text(FooterState(tokens=1200, cost=0.04)) == "1.2k tok · $0.0400"
    sums_in_another_order = FooterState(
        tokens=12_300, cost=0.1 + 0.2, session_tokens=12_300, session_cost=0.3
    )
    assert totals_text(sums_in_another_order) == "12k tok · $0.3000"
    more = FooterState(tokens=12_300, cost=0.04, session_tokens=40_100, session_cost=1.2)
    assert totals_text(more) == "branch 12k tok $0.0400 · session 40k $1.20"


def usage(n: int) -> dict[str, int]:
    return {"input_tokens": n, "output_tokens": n // 10}


async def test_session_totals_count_every_branch_and_load_on_reopen(
    fake_provider, fake_args
) -> None:
    argv = [*fake_args, "--model", "openai/gpt-4o"]  # a model with prices
    fake_provider.script(
        Reply(text="one", usage=usage(1000)),
        Reply(text="two", usage=usage(3000)),
        Reply(text="two again", usage=usage(5000)),
    )
    async with running(argv, size=(140, 32)) as pilot:  # wide enough for both totals
        await send(pilot, "first")
        await send(pilot, "second")
        assert "4.4k tok" in screen_text(pilot)
        await pilot.press("ctrl+r")  # regenerate the last reply: a second branch
        await settle(pilot)
        state = pilot.app.screen.query_one(StatusFooter).state
        assert (state.tokens, state.session_tokens) == (1100 + 5500, 1100 + 3300 + 5500)
        assert state.session_cost > state.cost > 0
        assert "branch 6.6k tok" in screen_text(pilot) and "session 9.9k" in screen_text(pilot)
        session_id = app_of(pilot).conversation.session.id
    async with running([*argv, "--session", session_id]) as pilot:
        state = pilot.app.screen.query_one(StatusFooter).state
        assert (state.tokens, state.session_tokens) == (6600, 9900)
        assert state.session_cost > state.cost > 0


async def test_at_80_columns_the_footer_keeps_model_context_and_help(
    fake_provider, fake_args
) -> None:
    """Issue 12: at 80x24 the totals shorten first; model, context and the help hint stay."""
    argv = [*fake_args, "--model", "openai/gpt-4o"]
    fake_provider.script(
        Reply(text="one", usage=usage(1000)),
        Reply(text="two", usage=usage(3000)),
    )
    async with running(argv, size=(80, 24)) as pilot:
        await send(pilot, "first")
        await pilot.press("ctrl+r")  # a second branch: the footer has both totals to show
        await settle(pilot)
        footer = screen_text(pilot).rstrip().splitlines()[-1]
        assert "openai/gpt-4o" in footer and "ctx " in footer and "f1 help" in footer, footer
        assert "session" not in footer


def test_message_keys_that_do_not_fit_point_to_help() -> None:
    keys = "enter edit · ←/→ alternatives · alt+h branch · alt+l label · alt+c copy · alt+n fork · esc back"
    assert fit_hints(keys, len(keys), "f1 help") == keys  # all fit: nothing added
    narrow = fit_hints(keys, 70, "f1 help")
    assert narrow == "enter edit · ←/→ alternatives · alt+h branch · f1 help · esc back"
    assert (
        fit_hints(keys, 10, "f1 help") == "f1 help · esc back"
    )  # never more than one line's worth dropped silently
