"""Streams that cannot hang a reply (issue 37): the real ``tangents -p``
against the fake provider's hostile modes, with the limits set small in the
config. Each ends with one line on stderr and exit code 1, the reply saved as
it stood and the database sound.

The limits are settings, so a test sets them to a second or two: what is
checked is that the reply ends and how, never how long it took (the
subprocess timeout only turns a hang into a failure).
"""

from __future__ import annotations

import json

import pytest
from fake_provider import Reply, Stall, Trickle

from tests.integration.cli import run
from tests.integration.limits_run import (
    CLAUDE,
    FULL,
    GPT,
    HANG,
    ask,
    one_line,
    saved_reply,
    text_of,
)


@pytest.mark.parametrize("model", [GPT, CLAUDE])
def test_no_first_token_within_the_limit_ends_the_reply(tmp_path, fake_provider, model) -> None:
    fake_provider.script(Stall(HANG))
    result = ask(tmp_path, fake_provider, model, first_token_timeout=1)
    assert "first_token_timeout" in one_line(result)
    reply = saved_reply(tmp_path)
    assert reply["stop_reason"] == "error"
    assert "first_token_timeout" in reply["error"]


@pytest.mark.parametrize("model", [GPT, CLAUDE])
def test_silence_after_the_reply_began_ends_it_and_keeps_the_text(
    tmp_path, fake_provider, model
) -> None:
    fake_provider.script(Stall(HANG, after_chunks=6))
    result = ask(tmp_path, fake_provider, model, idle_timeout=1)
    assert "idle_timeout" in one_line(result)
    assert result.stdout.strip() and FULL.startswith(result.stdout.strip())
    reply = saved_reply(tmp_path)
    assert reply["stop_reason"] == "error" and "idle_timeout" in reply["error"]
    assert text_of(reply) == result.stdout.removesuffix("\n")


def test_a_connection_kept_open_without_done_ends_at_the_idle_limit(
    tmp_path, fake_provider
) -> None:
    """Every chunk but ``[DONE]`` (role, one piece, finish, usage), then nothing."""
    fake_provider.script(Stall(HANG, after_chunks=4, reply=Reply(text="abcd")))
    result = ask(tmp_path, fake_provider, GPT, idle_timeout=1)
    assert "idle_timeout" in one_line(result)
    assert text_of(saved_reply(tmp_path)) == "abcd"


def test_a_trickling_server_is_ended_by_the_total_limit(tmp_path, fake_provider) -> None:
    """One byte at a time, never silent long: only ``--max-time`` ends it."""
    fake_provider.script(Trickle(0.005))
    result = ask(
        tmp_path, fake_provider, GPT, "--max-time", "3", first_token_timeout=60, idle_timeout=60
    )
    assert "max_time" in one_line(result)
    reply = saved_reply(tmp_path)
    assert reply["stop_reason"] == "error" and "max_time" in reply["error"]
    assert FULL.startswith(text_of(reply))


def test_max_time_in_the_config(tmp_path, fake_provider) -> None:
    fake_provider.script(Trickle(0.005))
    result = ask(tmp_path, fake_provider, CLAUDE, max_time=2)
    assert "max_time" in one_line(result)
    saved_reply(tmp_path)


def test_ten_seconds_without_a_word_are_said_once_on_stderr(tmp_path, fake_provider) -> None:
    fake_provider.script(Stall(11, reply=Reply(text="late but here")))
    result = ask(tmp_path, fake_provider, GPT, first_token_timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "late but here\n"
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("tangents: waiting for the first token") and "10 s" in line


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("first_token_timeout", "0"),
        ("idle_timeout", '"soon"'),
        ("max_time", "-5"),
        ("max_time", "inf"),
    ],
)
def test_a_limit_that_is_not_a_positive_number_is_refused_in_one_line(
    tmp_path, setting, value
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"{setting} = {value}\n")
    result = run("--db", str(tmp_path / "t.db"), "--config", str(config), "-m", "demo", "-p", "hi")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert f"{setting}: must be " in line  # the config check's words: a number, in its range


def test_max_time_on_the_command_line_must_be_a_number(tmp_path) -> None:
    result = run("--db", str(tmp_path / "t.db"), "-m", "demo", "--max-time", "soon", "-p", "hi")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert "--max-time must be a number of seconds above 0" in line
    assert not (tmp_path / "t.db").exists()


def test_json_lines_count_the_seconds_of_silence(tmp_path, fake_provider) -> None:
    fake_provider.script(Stall(1.5, reply=Reply(text="late")))
    result = ask(tmp_path, fake_provider, GPT, "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    silences = [e for e in events if e["type"] == "silence"]
    assert silences[0] == {"type": "silence", "seconds": 1, "started": False}
    assert events.index(silences[0]) < [e["type"] for e in events].index("text")
