"""The app meets values no well-behaved server sends: the reply is saved as
far as it came with a one-line error shown, and the app carries on."""

from __future__ import annotations

from fake_provider import RawStream, Reply

from tests.providers.test_provider_values import sse_openai
from tests.tui.helpers import app_of, running, screen_text, send
from tests.tui.test_reply import assistant_messages

INTEGER_TOOL_ID = '{"tool_calls":[{"index":0,"id":7,"function":{"name":"f","arguments":"{}"}}]}'


async def test_an_integer_tool_id_is_an_error_reply_and_the_app_carries_on(
    fake_provider, fake_args
) -> None:
    fake_provider.script(
        RawStream(sse_openai('{"content":"so far \\ud800"}', INTEGER_TOOL_ID)),
        Reply(text="Fine now."),
    )
    async with running(fake_args) as pilot:
        await send(pilot, "hello")
        [failed] = assistant_messages(pilot)
        assert failed.stop_reason == "error"
        assert failed.meta["error_kind"] == "bad_response"
        assert failed.text == "so far \ufffd"
        assert "could not be read" in screen_text(pilot)
        await send(pilot, "again")
        assert assistant_messages(pilot)[-1].text == "Fine now."
        assert app_of(pilot).is_running
