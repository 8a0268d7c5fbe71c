"""The endpoint is remembered with the model (issue #14).

``tangents --model openai/smollm2 --api-base URL -p …`` then ``tangents -c -p …``
went to the default OpenAI host and failed ("Connection error", retried three
times): the base URL was not saved with the session.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply

from core.chat.target import savable_base_url
from core.formats.export import EXPORT_FORMATS
from tests.integration.cli import run

LOCAL = "openai/smollm2"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def model_changes(db: Path) -> list[dict]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT payload FROM entries WHERE type = 'model_change' ORDER BY created_at"
        ).fetchall()
    return [json.loads(row[0]) for row in rows]


def test_continue_goes_back_to_the_endpoint_of_the_first_run(fake_provider, db) -> None:
    fake_provider.script(Reply(text="first"), Reply(text="second"))
    base = fake_provider.base_url + "/v1"
    first = run("--db", str(db), "--model", LOCAL, "--api-base", base, "-p", "one")
    assert first.returncode == 0, first.stderr
    second = run("--db", str(db), "-c", "-p", "two")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "second\n"
    sent = fake_provider.last_request.body
    assert sent["model"] == "smollm2"
    assert [m["content"] for m in sent["messages"] if m["role"] == "user"] == ["one", "two"]
    assert [c.get("api_base") for c in model_changes(db)] == [base]


def test_api_base_given_again_overrides_the_saved_one(fake_provider, db) -> None:
    fake_provider.script(Reply(text="first"))
    first = run(
        "--db", str(db), "--model", LOCAL, "--api-base", fake_provider.base_url + "/v1", "-p", "a"
    )
    assert first.returncode == 0, first.stderr
    with FakeProvider() as other:
        other.script(Reply(text="from the other server"))
        second = run("--db", str(db), "-c", "--api-base", other.base_url + "/v1", "-p", "b")
        assert second.returncode == 0, second.stderr
        assert second.stdout == "from the other server\n"
        assert len(other.requests) == 1
    assert len(fake_provider.requests) == 1
    assert [c.get("api_base") for c in model_changes(db)][-1] == other.base_url + "/v1"


def test_only_the_base_url_is_saved_never_a_key(fake_provider, db) -> None:
    fake_provider.script(Reply(text="ok"))
    host = fake_provider.base_url.split("//", 1)[1]
    base = f"http://user:sk-SECRET-in-url@{host}/v1"
    result = run("--db", str(db), "--model", LOCAL, "--api-base", base, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert model_changes(db)[0]["api_base"] == f"http://{host}/v1"
    assert b"SECRET" not in db.read_bytes()


SECRET_SEGMENT = "Zq7TkP2mW9xR4vB8nL3s"
"""A random-looking path segment: a token some gateways take in the path."""


@pytest.mark.parametrize(
    ("path", "saved_path"),
    [
        (f"/key/{SECRET_SEGMENT}/v1", "/key/v1"),
        (f"/v1/token/{SECRET_SEGMENT.lower()}", "/v1/token"),
        (f"/v1/sk-abc{SECRET_SEGMENT}", "/v1"),
        (f"/gateway/{SECRET_SEGMENT}/v1", "/gateway/v1"),
    ],
)
def test_a_token_in_the_api_base_path_is_not_saved(fake_provider, db, path, saved_path) -> None:
    fake_provider.script(Reply(text="ok"))
    base = fake_provider.base_url + path
    result = run("--db", str(db), "--model", LOCAL, "--api-base", base, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert fake_provider.last_request.path == path + "/chat/completions", "sent where named"
    assert model_changes(db)[0]["api_base"] == fake_provider.base_url + saved_path
    session_id = json.loads(run("--db", str(db), "sessions", "list", "--json").stdout)[0]["id"]
    for format in EXPORT_FORMATS:
        exported = run("--db", str(db), "sessions", "export", session_id, "--format", format)
        assert exported.returncode == 0, exported.stderr
        assert SECRET_SEGMENT.lower() not in exported.stdout.lower()
    assert SECRET_SEGMENT.lower().encode() not in db.read_bytes().lower()


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com/v1",
        "https://example.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18",
        "http://127.0.0.1:8080/v1/projects/0b6f5c1e-3a1d-4f6e-9c53-2d7a8e1f4b90",
        "https://openrouter.ai/api/v1",
        "https://api-inference.huggingface.co/models/meta-llama/Meta-Llama-3-8B-Instruct/v1",
        "https://host/keyboard/layouts/v1",
    ],
)
def test_ordinary_api_base_paths_are_saved_whole(url) -> None:
    assert savable_base_url(url) == url
