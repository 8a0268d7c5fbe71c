"""The fake's llama-cpp-python mode keeps that server's defaults (issue 32):
a second request cuts off the running answer, and no usage is sent."""

from __future__ import annotations

import asyncio

import httpx
from fake_local_server import LocalServer

from tests.fake_provider import FakeProvider, Reply


async def test_the_fake_llama_cpp_python_cuts_off_a_running_answer_and_sends_no_usage() -> None:
    """The imitation the done-when test relies on: a second request cuts off the first."""
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider(local=local, chunk_delay=0.01) as server:
        server.script(Reply(text="a long answer " * 40), Reply(text="short"))
        body = {"model": "smollm2", "messages": [{"role": "user", "content": "hi"}]}
        body |= {"stream": True, "stream_options": {"include_usage": True}}
        url = server.base_url + "/v1/chat/completions"
        async with httpx.AsyncClient() as client:

            async def first() -> str:
                async with client.stream("POST", url, json=body) as response:
                    text = ""
                    try:
                        async for chunk in response.aiter_text():
                            text += chunk
                    except httpx.HTTPError:
                        pass
                    return text

            running = asyncio.ensure_future(first())
            while server.chunks_sent < 3:
                await asyncio.sleep(0.01)
            second = await client.post(url, json=body)
            cut = await running
    assert local.interrupted == 1
    assert "[DONE]" not in cut
    assert "[DONE]" in second.text and '"usage"' not in second.text
