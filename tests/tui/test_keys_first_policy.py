"""The app's keys-first policy: stream readers (given it as their pace) let a
key reach its widget and a render finish, renderers let a key be painted,
and a key never reported cannot stall a stream beyond the bound."""

from __future__ import annotations

import asyncio

from core.providers.pacing import LoopShare
from tui.internals.keys_first import UiFirst


async def loop_turns(count: int = 10) -> None:
    """Let every ready task run ``count`` times (no clock involved)."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_reader_waits_at_its_slice_end_until_the_key_is_handled() -> None:
    keys = UiFirst(hold_seconds=30)
    share = LoopShare(keys.reader_turn, slice_seconds=0)
    keys.key_read()
    reader = asyncio.create_task(share.tick())
    await loop_turns()
    assert not reader.done()
    keys.key_handled()
    await asyncio.wait_for(reader, 5)
    assert keys.held  # handled, not yet painted


async def test_a_renderer_waits_until_the_key_is_painted_too() -> None:
    keys = UiFirst(hold_seconds=30)
    keys.key_read()
    renderer = asyncio.create_task(keys.render_turn())
    keys.key_handled()
    await loop_turns()
    assert not renderer.done()
    keys.key_painted()
    await asyncio.wait_for(renderer, 5)
    assert not keys.held


async def test_every_key_read_is_waited_for() -> None:
    keys = UiFirst(hold_seconds=30)
    keys.key_read()
    keys.key_read()
    reader = asyncio.create_task(keys.reader_turn())
    keys.key_handled()
    await loop_turns()
    assert not reader.done()
    keys.key_handled()
    await asyncio.wait_for(reader, 5)


async def test_without_keys_nothing_waits() -> None:
    keys = UiFirst(hold_seconds=30)
    await asyncio.wait_for(keys.render_turn(), 5)
    share = LoopShare(keys.reader_turn, slice_seconds=0)
    await asyncio.wait_for(share.tick(), 5)


async def test_a_key_never_reported_holds_streams_only_up_to_the_bound() -> None:
    keys = UiFirst(hold_seconds=0.05)
    keys.key_read()  # went to a widget that was removed: no handling, no paint
    await asyncio.wait_for(keys.render_turn(), 5)
    assert not keys.held  # forgotten: the next slice does not wait again


async def test_a_reader_waits_while_a_render_is_under_way() -> None:
    ui = UiFirst(hold_seconds=30)
    share = LoopShare(ui.reader_turn, slice_seconds=0)
    with ui.rendering():
        reader = asyncio.create_task(share.tick())
        await loop_turns()
        assert not reader.done()
        await asyncio.wait_for(ui.render_turn(), 5)  # renders do not wait for renders
    await asyncio.wait_for(reader, 5)
    assert not ui.held


def test_one_instance_serves_successive_event_loops() -> None:
    """The app's instance is the process's; each test (and each run) has its own loop."""
    keys = UiFirst(hold_seconds=30)

    async def one_key() -> None:
        keys.key_read()
        waiter = asyncio.create_task(keys.render_turn())
        await loop_turns()
        keys.key_handled()
        keys.key_painted()
        await asyncio.wait_for(waiter, 5)

    asyncio.run(one_key())
    asyncio.run(one_key())


async def test_keys_a_closed_ui_never_reported_hold_nothing_back() -> None:
    first = UiFirst(hold_seconds=30.0)
    first.key_read()
    first.key_read()
    first.key_handled()
    first.forget_keys()
    await asyncio.wait_for(first.render_turn(), 1)
    await asyncio.wait_for(first.reader_turn(), 1)
    assert not first.held


async def test_a_key_read_while_the_reader_gives_its_turn_holds_it_too() -> None:
    """The key that arrives while the reader has let the loop go (its slice
    over) is one its next slice would delay: the reader waits for it."""
    keys = UiFirst(hold_seconds=30)
    share = LoopShare(keys.reader_turn, slice_seconds=0)
    reader = asyncio.create_task(share.tick())
    await asyncio.sleep(0)  # the reader has started and given the loop a turn
    keys.key_read()
    await loop_turns()
    assert not reader.done()
    keys.key_handled()
    await asyncio.wait_for(reader, 5)


def test_renders_do_not_keep_a_key_waiting_beyond_its_hold(monkeypatch) -> None:
    """A key whose handler never finishes (it awaits a screen update) must not
    hold screen updates for good while a reply's renders come one after another."""
    import tui.internals.keys_first as keys_first

    now = [100.0]
    monkeypatch.setattr(keys_first.time, "perf_counter", lambda: now[0])
    keys = UiFirst(hold_seconds=0.1)
    keys.key_read()
    for _ in range(5):
        now[0] += 0.05
        with keys.rendering():
            pass
    assert not keys.key_waiting


def test_a_key_waits_until_handled_and_within_the_hold() -> None:
    keys = UiFirst(hold_seconds=30)
    assert not keys.key_waiting
    keys.key_read()
    assert keys.key_waiting
    keys.key_handled()
    assert not keys.key_waiting  # painted or not: its handling is what waits for no update
    late = UiFirst(hold_seconds=0)
    late.key_read()
    assert not late.key_waiting  # never reported: nothing waits beyond the bound
