"""Issue 35, the round table in print mode: two agents on two models of one
endpoint, asked in the order the message names them, each with only its own
system prompt; the second hears the first as a user-role ``Critic: …`` line;
both replies are saved with their authors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_provider import Reply
from tests.integration.cli import export, run, sessions


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "t.db"


def write_config(tmp_path: Path, base_url: str) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(
        'user_name = "Ana"\n'
        'system = "the session prompt"\n'
        "[[endpoints]]\n"
        'name = "lab"\n'
        f'base_url = "{base_url}/v1"\n'
        'models = ["critic-model", "poet-model"]\n'
        "[[agents]]\n"
        'name = "Critic"\n'
        'model = "lab/critic-model"\n'
        'system = "You judge."\n'
        "[[agents]]\n"
        'name = "Poet"\n'
        'model = "lab/poet-model"\n'
        'system = "You rhyme."\n'
    )
    return config


def system_of(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "system"]


def test_two_agents_answer_in_order_each_hearing_the_other(fake_provider, db, tmp_path) -> None:
    config = write_config(tmp_path, fake_provider.base_url)
    fake_provider.script_for("critic-model", Reply(text="Too long."))
    fake_provider.script_for("poet-model", Reply(text="Short and sweet."))
    result = run("--db", str(db), "--config", str(config), "-p", "@Poet @critic is this good?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Poet:\nShort and sweet.\n\nCritic:\nToo long.\n"
    first, second = (r.body for r in fake_provider.requests)
    assert (first["model"], second["model"]) == ("poet-model", "critic-model")
    assert system_of(first) == ["You rhyme."] and system_of(second) == ["You judge."]
    question = "Ana: @Poet @critic is this good?"
    assert first["messages"][1:] == [{"role": "user", "content": question}]
    [asked] = second["messages"][1:]
    assert asked["role"] == "user"
    assert asked["content"] == f"{question}\nPoet: Short and sweet."
    [listed] = sessions(db)
    saved = [
        (e["payload"]["role"], e["payload"].get("agent"))
        for e in export(db, listed["id"])["entries"]
        if e["type"] == "message" and e["payload"]["role"] in ("user", "assistant")
    ]
    assert saved == [("user", None), ("assistant", "Poet"), ("assistant", "Critic")]


def test_json_events_name_the_agent(fake_provider, db, tmp_path) -> None:
    config = write_config(tmp_path, fake_provider.base_url)
    fake_provider.script_for("critic-model", Reply(text="No."))
    result = run("--db", str(db), "--config", str(config), "--json", "-p", "@Critic well?")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert {"type": "agent", "agent": "Critic", "model": "lab/critic-model"} in events
    [ended] = [e for e in events if e["type"] == "turn_ended"]
    assert ended["agent"] == "Critic"
    replies = [
        entry
        for e in events
        if e["type"] == "entries_saved"
        for entry in e["entries"]
        if entry.get("role") == "assistant"
    ]
    assert [r["agent"] for r in replies] == ["Critic"]


def test_an_unknown_name_stays_text_and_the_session_model_answers(
    fake_provider, db, tmp_path
) -> None:
    config = write_config(tmp_path, fake_provider.base_url)
    fake_provider.script(Reply(text="plain answer"))
    result = run(
        "--db", str(db), "--config", str(config), "-m", "lab/critic-model", "-p", "hi @Nobody"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "plain answer\n"
    assert "no agent called @Nobody" in result.stderr
    body = fake_provider.last_request.body
    assert system_of(body) == ["the session prompt"]
    assert body["messages"][1:] == [{"role": "user", "content": "hi @Nobody"}]
