"""Importing the providers must not import an SDK (or Textual): the first
frame is drawn before any of them is needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.providers.anthropic_provider import AnthropicProvider
from core.providers.litellm_provider import LiteLLMProvider
from core.providers.openai_provider import OpenAIProvider
from core.providers.registry import get_provider

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys
import core.providers
import core.providers.registry, core.providers.retry, core.providers.assemble, core.providers.errors
import core.providers.cost, core.providers.demo, core.providers.anthropic_provider, core.providers.litellm_provider
import core.providers.openai_provider, core.providers.openai_chunks, core.providers.sdk
from core.sessions.messages import Usage
from core.providers.cost import cost_for
from core.providers.registry import get_provider
get_provider("anthropic/claude-sonnet-4-6"); get_provider("openai/gpt-4o"); get_provider("demo")
priced = cost_for("anthropic/claude-sonnet-4-6", Usage(input_tokens=1000))  # prices without litellm
loaded = [m for m in ("litellm", "anthropic", "openai", "textual", "httpx", "httpx2") if m in sys.modules]
print(json.dumps({"loaded": loaded, "cost": priced.cost}))
"""


def test_importing_providers_loads_no_sdk():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout)
    assert report["loaded"] == []
    assert report["cost"] > 0


def test_registry_routes_model_names():
    assert isinstance(get_provider("anthropic/claude-sonnet-4-6"), AnthropicProvider)
    assert isinstance(get_provider("openai/gpt-4o"), OpenAIProvider)
    assert isinstance(get_provider("openai/my-endpoint-model"), OpenAIProvider)
    assert isinstance(get_provider("gpt-4o"), LiteLLMProvider)  # litellm guesses the provider
    assert isinstance(get_provider("ollama/llama3"), LiteLLMProvider)
    assert isinstance(get_provider("openrouter/anthropic/claude-sonnet-4-6"), LiteLLMProvider)


AWAIT_PROBE = """
import asyncio, json, sys
from core.providers import sdk

async def main():
    ticks = []
    async def ticker():
        while True:
            ticks.append("openai" in sys.modules and sdk.is_loaded("openai"))
            await asyncio.sleep(0.01)
    task = asyncio.create_task(ticker())
    module = await sdk.loaded("openai")
    task.cancel()
    return {"name": module.__name__, "ticks_before_loaded": ticks.count(False)}

print(json.dumps(asyncio.run(main())))
"""


def test_a_request_awaits_the_sdk_import_without_blocking_the_loop():
    """The import runs in a thread (held back here, as the e2e tests do): the
    loop keeps running other tasks until the SDK is there."""
    report = run_probe(AWAIT_PROBE, TANGENTS_SDK_IMPORT_DELAY="0.3")
    assert report["name"] == "openai"
    assert report["ticks_before_loaded"] > 1


CANCELLED_AWAIT_PROBE = """
import asyncio, json
from core.providers import sdk

async def main():
    given_up = asyncio.ensure_future(sdk.loaded("httpx"))  # a window question that timed out
    await asyncio.sleep(0.05)
    given_up.cancel()
    module = await sdk.loaded("httpx")  # the request that still needs it
    return {"given_up": given_up.cancelled(), "loaded": module.__name__}

print(json.dumps(asyncio.run(main())))
"""


def test_an_awaiter_that_gives_up_leaves_the_import_to_the_others():
    """The import is shared: a task cancelled while it waits for it (the window
    question's timeout) does not cancel it for the request that waits too."""
    report = run_probe(CANCELLED_AWAIT_PROBE, TANGENTS_SDK_IMPORT_DELAY="0.3")
    assert report == {"given_up": True, "loaded": "httpx"}


CLI_PROBE = """
import json, sys
from core.providers import sdk

httpx = sdk.preload("httpx").result()
try:
    httpx.main()
except SystemExit as stop:
    said = str(stop)
print(json.dumps({"click": "click" in sys.modules, "said": said, "client": hasattr(httpx, "AsyncClient")}))
"""


def test_httpx_is_imported_without_its_command_line():
    """httpx's CLI (click, rich's progress bars, pygments' lexers) is what a
    first request would otherwise wait for; it is never run here."""
    report = run_probe(CLI_PROBE)
    assert report == {
        "click": False,
        "said": "the httpx command line is not loaded in Tangents",
        "client": True,
    }


def test_an_unknown_sdk_is_refused():
    from core.providers import sdk

    with pytest.raises(ValueError, match="unknown SDK"):
        sdk.preload("nonsense")


PROBE_START = """
import asyncio, json, sys
sys.path.append("tests")  # after the checkout: tests/core would shadow core
from fake_provider import FakeProvider, Reply
from core.sessions.messages import user_text
from core.providers.base import ChatRequest, UsageEvent
from core.providers import openai_provider, sdk
from core.providers.registry import get_provider

def gpt_request(server):
    return ChatRequest(
        model="openai/gpt-4o", messages=(user_text("hi"),),
        api_base=server.base_url + "/v1", api_key="sk-test-0000000000000000",
    )
"""
"""What both probes start with: the fake provider and a request to it."""


def run_probe(code: str, **env_vars: str) -> dict:
    """Run a probe in a fresh interpreter (nothing imported yet), with
    ``env_vars`` set too; its JSON report."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_vars}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


HOT_PATH_PROBE = (
    PROBE_START
    + """
async def main(server):
    request = gpt_request(server)
    events = [e async for e in get_provider(request.model).stream(request)]
    return [e.usage.cost for e in events if isinstance(e, UsageEvent)]

with FakeProvider() as server:
    server.script(Reply(text="hello", usage={"input_tokens": 1000, "output_tokens": 10}))
    costs = asyncio.run(main(server))
heavy = [m for m in ("litellm", "openai", "pydantic", "tiktoken", "tokenizers", "mcp") if m in sys.modules]
print(json.dumps({"heavy": heavy, "costs": costs}))
"""
)


def test_an_openai_compatible_reply_is_priced_without_litellm_the_openai_sdk_or_a_tokenizer():
    """httpx alone: neither SDK (seconds to import, models never used) nor a tokenizer."""
    report = run_probe(HOT_PATH_PROBE)
    assert report["heavy"] == []
    assert len(report["costs"]) == 1 and report["costs"][0] > 0


HTTPX_FIRST_CONNECTION_PROBE = (
    PROBE_START
    + """
from core.providers import openai_http

async def main(server):
    client = await openai_provider.httpx_client(server.base_url)  # https's, on plain http here
    request = gpt_request(server)
    params = openai_provider.request_params(request)
    async with openai_http.chunks(client, request.api_base, "k", params, timeout=5) as chunks:
        return "".join([chunk["choices"][0]["delta"].get("content") or "" async for chunk in chunks if chunk["choices"]])

sdk.preload("httpx", openai_provider.prepare).result()
before = set(sys.modules)
with FakeProvider() as server:
    server.script(Reply(text="hello"))
    text = asyncio.run(main(server))
fresh = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("httpx", "httpcore", "h11", "h2", "anyio"))
print(json.dumps({"fresh": fresh, "text": text}))
"""
)


def test_the_first_httpx_request_imports_nothing_the_background_import_could_have():
    """httpcore, h11 and anyio's sockets are imported when httpx's first real
    connection opens (an https endpoint's, a proxy's): ``prepare`` imports
    them in the background thread, so the first request does no import on the
    event loop."""
    report = run_probe(HTTPX_FIRST_CONNECTION_PROBE)
    assert report["text"] == "hello"
    assert report["fresh"] == []


ANTHROPIC_FIRST_CONNECTION_PROBE = (
    PROBE_START
    + """
from core.providers import anthropic_provider

async def main(server):
    request = ChatRequest(
        model="anthropic/claude-sonnet-4-6", messages=(user_text("hi"),),
        api_base=server.base_url, api_key="sk-ant-test-0000000000",
    )
    return [type(e).__name__ async for e in anthropic_provider.AnthropicProvider().stream(request)]

anthropic_provider.AnthropicProvider().preload()
sdk.preload("anthropic").result()
before = set(sys.modules)
with FakeProvider() as server:
    server.script(Reply(text="hello"))
    events = asyncio.run(main(server))
fresh = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("httpx2", "httpcore2", "anthropic"))
print(json.dumps({"fresh": fresh, "events": events}))
"""
)


def test_the_first_anthropic_request_imports_no_part_of_its_client_on_the_loop():
    """The SDK's HTTP transport imports httpcore2 when its first client is made
    (~0.4 s): ``_prepare`` makes one in the import thread."""
    report = run_probe(ANTHROPIC_FIRST_CONNECTION_PROBE)
    assert "TextDelta" in report["events"]
    assert report["fresh"] == []


CA_READS = """
import ssl, threading

read_on = []
real_load = ssl.SSLContext.load_verify_locations

def recorded(self, *args, **kwargs):
    read_on.append(threading.current_thread().name)
    return real_load(self, *args, **kwargs)
"""
"""Probe code that records in ``read_on`` the thread of each CA bundle read
(once ``ssl.SSLContext.load_verify_locations = recorded``)."""

ASK_WINDOW_PROBE = (
    PROBE_START
    + CA_READS
    + """
from core.providers.endpoint_window import ask_window

async def ask_and_send(server):
    answer = await ask_window(server.base_url, "gpt-4o")
    request = gpt_request(server)
    events = [type(e).__name__ async for e in get_provider(request.model).stream(request)]
    return answer, events

ssl.SSLContext.load_verify_locations = recorded
with FakeProvider() as server:
    server.script(Reply(text="hello"))
    openai_provider.OpenAIProvider().preload(server.base_url + "/v1")  # the app's warm-up
    sdk.preload("httpx").result()
    answer, events = asyncio.run(ask_and_send(server))
print(json.dumps({"read_on": read_on, "answer": answer, "events": events}))
"""
)


def test_a_local_plain_http_server_is_asked_and_answered_without_reading_the_ca_bundle():
    """The window question and the first request go to a local server over
    plain http: the CA bundle (25-40 ms of the first message's wait, on the
    loop or in a thread) is read by neither, nor by the warm-up for them."""
    report = run_probe(ASK_WINDOW_PROBE)
    assert report["read_on"] == []
    assert report["answer"] is None  # the fake provider says no window
    assert "TextDelta" in report["events"]


HTTPS_WARM_UP_PROBE = (
    PROBE_START
    + CA_READS
    + """
from core.providers import tls

async def client_context():
    context = await tls.ready("https://api.openai.com/v1")
    return context.cert_store_stats()["x509_ca"]

ssl.SSLContext.load_verify_locations = recorded
openai_provider.OpenAIProvider().preload(None)  # OpenAI's own endpoint: https
certificates = asyncio.run(client_context())
print(json.dumps({"read_on": read_on, "certificates": certificates}))
"""
)


def test_an_https_endpoint_has_the_ca_bundle_read_once_in_a_thread_before_its_client_is_made():
    """The warm-up for OpenAI's https endpoint starts reading the CA bundle in a
    thread, never on the loop; a client's context is had once it is read."""
    report = run_probe(HTTPS_WARM_UP_PROBE)
    assert report["read_on"] == ["tls-trust-store"]
    assert report["certificates"] > 0


HTTP2_PROBE = (
    PROBE_START
    + """
sdk.preload("httpx", openai_provider.prepare).result()
prepared_without_h2 = not any(m in sys.modules for m in ("h2", "hpack"))
import httpcore

async def main(server):
    async with httpcore.AsyncConnectionPool(http1=False, http2=True) as pool:
        try:
            await pool.request("GET", server.base_url + "/v1/models")
        except (httpcore.ReadError, httpcore.RemoteProtocolError):  # HTTP/1.1 only: it hangs up
            return "spoke HTTP/2"
    return "answered"

with FakeProvider() as server:
    outcome = asyncio.run(main(server))
print(json.dumps({"prepared_without_h2": prepared_without_h2, "outcome": outcome}))
"""
)


def test_http2_is_imported_only_by_a_connection_that_asks_for_it():
    """h2 (with hpack's tables) is not what a first HTTP/1.1 request waits for;
    a client that asks for HTTP/2 still speaks it."""
    report = run_probe(HTTP2_PROBE)
    assert report == {"prepared_without_h2": True, "outcome": "spoke HTTP/2"}
