"""A local server's refusal of a request, as llama-cpp-python words it (issue 32):
its own message, quoted in one line, and not retried."""

from __future__ import annotations

from fake_provider import Fail

from core.providers.base import ErrorEvent
from tests.providers.test_retry import Clock, run

CRASH = 'can only concatenate str (not "list") to str'


async def test_a_400_with_a_message_is_quoted_and_not_retried(openai_wire):
    openai_wire.server.script(Fail(400, message=CRASH), Fail(400, message=CRASH))
    clock = Clock()
    events, message = await run(openai_wire, sleep=clock.sleep, max_attempts=4)
    errors = [e.error for e in events if isinstance(e, ErrorEvent)]
    assert len(openai_wire.server.requests) == 1 and clock.waits == []
    assert [e.kind for e in errors] == ["bad_request"]
    assert CRASH in errors[0].message and "\n" not in errors[0].message
    assert "could not reach" not in errors[0].message


async def test_llama_cpp_pythons_500_for_a_crashed_handler_is_quoted(openai_wire):
    body = {"error": {"message": CRASH, "type": "internal_server_error"}}
    openai_wire.server.script(*[Fail(500, body=body)] * 4)
    clock = Clock()
    events, message = await run(openai_wire, sleep=clock.sleep, max_attempts=4)
    errors = [e.error for e in events if isinstance(e, ErrorEvent)]
    assert CRASH in errors[-1].message
    assert "could not reach" not in errors[-1].message
