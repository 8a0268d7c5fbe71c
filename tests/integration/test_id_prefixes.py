"""Session and entry ids accept any unique prefix, as git's do; an ambiguous
prefix is refused with the candidates (issue 12)."""

from __future__ import annotations

from tests.integration.cli import run
from tests.tui.helpers import app_of, running
from tests.tui.sessions_seed import seed


async def three():
    return await seed(
        ("Oak", ["When do I plant an oak?", "In autumn."], "2025-01-01T10:00:00.000000Z"),
        ("Rye", ["How do I bake rye?", "Slowly."], "2025-02-01T10:00:00.000000Z"),
        ("Bike", ["My chain skips", "Replace it."], "2025-03-01T10:00:00.000000Z"),
    )


async def test_a_unique_prefix_opens_the_session() -> None:
    oak, rye, bike = await three()
    async with running(["--model", "demo", "--session", rye.id[:8]]) as pilot:
        assert app_of(pilot).conversation.session.id == rye.id


async def test_an_entry_prefix_works_for_from() -> None:
    oak, rye, bike = await three()
    async with running(["--model", "demo", "--session", oak.id]) as pilot:
        first = app_of(pilot).conversation.session.path[0]
    async with running(["--model", "demo", "--from", first.id[:-6]]) as pilot:
        session = app_of(pilot).conversation.session
        assert session.id == oak.id and session.leaf_id == first.id


async def test_the_sessions_commands_take_a_prefix_and_refuse_an_ambiguous_one() -> None:
    oak, rye, bike = await three()
    result = run("sessions", "rename", bike.id[:8], "Bicycle")
    assert result.returncode == 0, result.stderr
    assert f"Renamed session {bike.id}" in result.stdout
    result = run("sessions", "export", "0000000", "--format", "markdown")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "ambiguous" in line and oak.id in line and rye.id in line and bike.id in line
    result = run("sessions", "export", "zzz", "--format", "markdown")
    assert result.returncode == 2 and "no session with id" in result.stderr
