"""A shared session file cannot send the user's key to its author's host (issue #37).

The ``api_base`` saved with a model change travels in a Tangents JSON export.
Imported as-is and continued with ``--session ID -p`` (or ``-c``), it sent
``Authorization: Bearer <OPENAI_API_KEY>`` to whatever host the file named;
with an ``anthropic/…`` model the Anthropic key went there instead. An
endpoint that arrives in a file is data: no request goes there until the user
names it (``--api-base``, the config, an ``[[endpoints]]`` entry, or the app's
one-time question).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_provider import FakeProvider, Reply

from tests.integration.cli import CANARY_ANTHROPIC, CANARY_OPENAI, export, outcome_lines, run

LOCAL = "openai/smollm2"


@pytest.fixture
def attacker() -> FakeProvider:
    with FakeProvider() as server:
        server.script(Reply(text="thanks for the key"))
        yield server


def shared_file(tmp_path: Path, fake_provider: FakeProvider, model: str, host: str) -> Path:
    """A session made here, exported, its endpoint changed to ``host``'s: what
    an attacker would hand over."""
    made = tmp_path / "author.db"
    fake_provider.script(Reply(text="hello"))
    base = fake_provider.base_url + ("" if model.startswith("anthropic/") else "/v1")
    result = run(
        "--db", str(made), "--model", model, "--api-base", base,
        "-p", "hi",
        env={"OPENAI_API_KEY": "sk-author", "ANTHROPIC_API_KEY": "sk-ant-author"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    session_id = json.loads(run("--db", str(made), "sessions", "list", "--json").stdout)[0]["id"]
    text = json.dumps(export(made, session_id)).replace(fake_provider.base_url, host)
    assert host in text
    path = tmp_path / "shared.json"
    path.write_text(text)
    return path


def import_session(db: Path, path: Path) -> str:
    result = run("--db", str(db), "sessions", "import", str(path), "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["id"]


def keys_env() -> dict[str, str]:
    return {"OPENAI_API_KEY": CANARY_OPENAI, "ANTHROPIC_API_KEY": CANARY_ANTHROPIC}


@pytest.mark.parametrize("model", [LOCAL, "anthropic/claude-sonnet-4-5"])
@pytest.mark.parametrize("how", ["--session", "-c"])
def test_an_imported_endpoint_gets_no_request_and_no_key(
    tmp_path: Path, fake_provider: FakeProvider, attacker: FakeProvider, model: str, how: str
) -> None:
    shared = shared_file(tmp_path, fake_provider, model, attacker.base_url)
    db = tmp_path / "victim.db"
    session_id = import_session(db, shared)
    which = ["--session", session_id] if how == "--session" else ["-c"]
    result = run("--db", str(db), *which, "-p", "a question for the host", env=keys_env())
    assert result.returncode == 2, result.stdout + result.stderr
    assert attacker.requests == [] and attacker.info_requests == []
    lines = outcome_lines(result.stderr)
    assert len(lines) == 1, result.stderr
    assert attacker.base_url.split("//", 1)[1] in lines[0]
    assert "--api-base" in lines[0]
    assert CANARY_OPENAI not in result.stderr and CANARY_ANTHROPIC not in result.stderr
    # nothing was written: the question can be asked again once the host is named
    messages = export(db, session_id)
    assert "a question for the host" not in json.dumps(messages)


def test_naming_the_host_uses_it_and_remembers_it(
    tmp_path: Path, fake_provider: FakeProvider, attacker: FakeProvider
) -> None:
    shared = shared_file(tmp_path, fake_provider, LOCAL, attacker.base_url)
    db = tmp_path / "victim.db"
    session_id = import_session(db, shared)
    named = run(
        "--db", str(db), "--session", session_id, "--api-base", attacker.base_url + "/v1",
        "-p", "hello", env=keys_env(),
    )  # fmt: skip
    assert named.returncode == 0, named.stderr
    assert named.stdout == "thanks for the key\n"
    assert len(attacker.requests) == 1
    attacker.script(Reply(text="again"))
    again = run("--db", str(db), "-c", "-p", "more", env=keys_env())
    assert again.returncode == 0, again.stderr
    assert again.stdout == "again\n"


def test_an_endpoint_named_in_the_config_is_trusted(
    tmp_path: Path, fake_provider: FakeProvider, attacker: FakeProvider
) -> None:
    shared = shared_file(tmp_path, fake_provider, LOCAL, attacker.base_url)
    db = tmp_path / "victim.db"
    session_id = import_session(db, shared)
    config = tmp_path / "config.toml"
    config.write_text(f'api_base = "{attacker.base_url}/v1"\n')
    result = run(
        "--db", str(db), "--config", str(config), "--session", session_id, "-p", "hello",
        env=keys_env(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(attacker.requests) == 1


def test_sessions_show_says_where_requests_would_go(
    tmp_path: Path, fake_provider: FakeProvider, attacker: FakeProvider
) -> None:
    shared = shared_file(tmp_path, fake_provider, LOCAL, attacker.base_url)
    db = tmp_path / "victim.db"
    session_id = import_session(db, shared)
    shown = run("--db", str(db), "sessions", "show", session_id)
    assert shown.returncode == 0, shown.stderr
    host = attacker.base_url.split("//", 1)[1]
    line = next(line for line in shown.stdout.splitlines() if host in line)
    assert "not trusted" in line
    assert attacker.requests == [] and attacker.info_requests == []
