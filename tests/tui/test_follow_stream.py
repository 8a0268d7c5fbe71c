"""Scrolling away from a streaming reply and back to its bottom follows it again."""

from __future__ import annotations

from fake_provider import Reply

from tests.tui.helpers import running, settle, type_text, wait_for

LINES = 3_000
TRIES = 20


def long_reply() -> Reply:
    """Many short paragraphs, paced so that the reply grows for many minutes
    (it is stopped after the tries), about 4 rows a second: a page takes
    seconds to grow, so a page at a time reaches the bottom even where each
    key takes a second to be handled (a loaded machine, a busy stream)."""
    text = "\n\n".join(f"line {i} of the long reply" for i in range(LINES))
    return Reply(text=text, chunk_size=8, delay=0.15)


async def test_page_down_to_the_bottom_of_a_stream_follows_it_again(
    fake_provider, fake_args
) -> None:
    fake_provider.script(long_reply())
    async with running(fake_args, size=(80, 24)) as pilot:
        screen = pilot.app.screen
        view = screen.chat_view
        await type_text(pilot, "go")
        await pilot.press("enter")

        def grown(since: int):
            return lambda: view.max_scroll_y > since + 3

        for attempt in range(TRIES):
            await wait_for(lambda: view.max_scroll_y > 40, pilot, timeout=60)
            await pilot.press("pageup")
            await wait_for(lambda: view.scroll_y < view.max_scroll_y - 5, pilot)
            while True:  # as a person does: a page at a time until the bottom
                bottom = view.max_scroll_y
                await pilot.press("pagedown")
                await wait_for(lambda: view.scroll_y == view.scroll_target_y, pilot)
                if view.scroll_target_y >= bottom:
                    break
            assert screen.replying, f"the reply ended before try {attempt}: {how_it_ended(screen)}"
            await wait_for(grown(view.max_scroll_y), pilot)
            await pilot.pause()
            assert view.scroll_target_y >= view.max_scroll_y - 1, (
                f"try {attempt}: the view stayed at {view.scroll_y} while the reply grew to "
                f"{view.max_scroll_y}"
            )
        await pilot.press("escape")  # enough: the reply is stopped
        await wait_for(lambda: not screen.replying, pilot)
        await settle(pilot)


def how_it_ended(screen) -> str:
    """The reply's stop reason and error, as saved."""
    message = screen.session.path[-1].message
    return f"{message.stop_reason}: {message.error}" if message is not None else "nothing saved"
