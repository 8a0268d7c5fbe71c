"""The fake provider as a standalone process, as end-to-end tests run it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from core.providers.anthropic_provider import AnthropicProvider
from core.providers.assemble import MessageBuilder
from core.providers.base import ChatRequest
from core.sessions.messages import user_text

SERVER = Path(__file__).resolve().parents[1] / "fake_provider.py"


def wait_for_port(path: Path, proc: subprocess.Popen) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists():
            return int(path.read_text())
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "server exited"
        time.sleep(0.02)
    raise AssertionError("the fake provider never wrote its port")


async def ask(base_url: str, text: str) -> str:
    request = ChatRequest(
        model="anthropic/claude-sonnet-4-6",
        messages=(user_text(text),),
        api_base=base_url,
        api_key="k" * 20,
    )
    builder = MessageBuilder(request.model)
    async for event in AnthropicProvider().stream(request):
        builder.add(event)
    return builder.finish().text


async def test_standalone_server_with_script_and_control_endpoints(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps([{"type": "reply", "text": "scripted hello"}, {"type": "fail", "status": 500}])
    )
    port_file = tmp_path / "port"
    with subprocess.Popen(
        [sys.executable, str(SERVER), "--port-file", str(port_file), "--script", str(script)],
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            await converse(f"http://127.0.0.1:{wait_for_port(port_file, proc)}")
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0


async def converse(base_url: str) -> None:
    assert await ask(base_url, "one") == "scripted hello"
    assert await ask(base_url, "two") == ""  # the scripted 500
    more = json.dumps(
        [
            {
                "type": "reply",
                "text": "queued later",
                "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
            }
        ]
    )
    urllib.request.urlopen(
        urllib.request.Request(f"{base_url}/_fake/script", data=more.encode(), method="POST")
    ).close()
    assert await ask(base_url, "three") == "queued later"
    assert await ask(base_url, "four") == "echo: four"
    with urllib.request.urlopen(f"{base_url}/_fake/requests") as response:
        recorded = json.load(response)
    assert [r["body"]["messages"][0]["content"][0]["text"] for r in recorded] == [
        "one",
        "two",
        "three",
        "four",
    ]
    assert all(r["path"] == "/v1/messages" for r in recorded)
