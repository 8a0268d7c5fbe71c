"""Nothing typed is lost, in the real ``tangents`` in tmux (issue 12): a sentence
typed (or pasted) while a message is focused, an edit whose input was cleared and retyped,
Esc while the branch summary is written, and Enter while a reply streams."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_provider import Reply, Stall

from tests.e2e.conftest import tangents_program

pytestmark = pytest.mark.slow

READY = "Message (enter sends"


def sent_texts(fake_provider) -> list[str]:
    """The conversation of the last request, as text (system prompt left out)."""
    texts = []
    for message in fake_provider.last_request.body["messages"]:
        if message["role"] == "system":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        texts.append(content)
    return texts


def start(tmux, fake_provider, app_env, *first: tuple[str, str]) -> None:
    """The app on the fake provider, after the exchanges ``first``."""
    tmux.start(
        [
            tangents_program(),
            "--model",
            "openai/x",
            "--api-base",
            f"{fake_provider.base_url}/v1",
        ],
        app_env,
    )
    tmux.wait_for(READY)
    for question, answer in first:
        fake_provider.script(Reply(text=answer))
        tmux.type(question)
        tmux.keys("Enter")
        tmux.wait_for(answer)


def test_a_sentence_typed_or_pasted_on_a_focused_message_is_sent_whole(
    tmux, fake_provider, app_env
) -> None:
    start(tmux, fake_provider, app_env, ("hi", "Hello there."))
    tmux.keys("C-Up")
    tmux.wait_for("esc back")  # the footer shows the message's keys
    tmux.keys("Up")
    tmux.type("what about cats")
    tmux.wait_for("what about cats")
    fake_provider.script(Reply(text="Cats are fine."))
    tmux.keys("Enter")
    tmux.wait_for("Cats are fine.")
    assert sent_texts(fake_provider) == ["hi", "Hello there.", "what about cats"]
    tmux.keys("C-Up")  # a paste on a focused message goes to the input too
    tmux.wait_for("esc back")
    tmux.paste("and dogs?")
    tmux.wait_for("and dogs?")
    fake_provider.script(Reply(text="Dogs too."))
    tmux.keys("Enter")
    tmux.wait_for("Dogs too.")
    assert sent_texts(fake_provider)[-1] == "and dogs?"
    tmux.keys("C-q")
    screen = tmux.wait_for("EXITED-0")
    assert "Resume with: tangents -c" in screen  # the newest session


def test_an_edit_with_the_input_cleared_and_retyped_stays_an_edit(
    tmux, fake_provider, app_env
) -> None:
    start(tmux, fake_provider, app_env, ("q1", "a1 done"), ("q2", "a2 done"))
    tmux.keys("C-Up", "Up")  # the reply, then the question q2
    tmux.wait_for("esc back")
    tmux.keys("Enter")
    tmux.wait_for("editing message 3")
    tmux.keys("C-u")
    tmux.type("q2 retyped")
    fake_provider.script(Reply(text="a2 again"))
    tmux.keys("Enter")
    tmux.wait_for("Summarize the branch")  # q2 and a2 are left behind
    tmux.keys("n")
    tmux.wait_for("a2 again")
    assert sent_texts(fake_provider) == ["q1", "a1 done", "q2 retyped"]


def test_escape_during_the_branch_summary_keeps_the_edited_message(
    tmux, fake_provider, app_env
) -> None:
    Path(os.environ["TANGENTS_HOME"], "config.toml").write_text('branch_summary = "ask"\n')
    start(tmux, fake_provider, app_env, ("q1", "a1 done"), ("q2", "a2 done"))
    tmux.keys("C-Up", "Up")
    tmux.wait_for("esc back")
    tmux.keys("Enter")
    tmux.wait_for("editing message 3")
    tmux.type(" more")
    tmux.keys("Enter")
    tmux.wait_for("Summarize the branch")
    fake_provider.script(Stall(60, reply=Reply(text="never")), Reply(text="a2 for the edit"))
    tmux.keys("y")
    tmux.wait_for("summarizing the branch you left")
    tmux.keys("Escape")
    tmux.wait_for("a2 for the edit")
    assert sent_texts(fake_provider) == ["q1", "a1 done", "q2 more"]


def test_enter_while_a_reply_streams_queues_the_message(tmux, fake_provider, app_env) -> None:
    start(tmux, fake_provider, app_env)
    fake_provider.script(
        Stall(8, after_chunks=8, reply=Reply(text="slow " * 100 + "end.")),
        Reply(text="Second answer."),
    )
    tmux.type("first")
    tmux.keys("Enter")
    tmux.wait_for("slow slow")
    tmux.type("second")
    tmux.keys("Enter")
    tmux.wait_for("queued second")
    tmux.wait_for("Second answer.")
    assert sent_texts(fake_provider)[::2] == ["first", "second"]


def test_keys_typed_as_the_program_starts_are_typed(tmux, fake_provider, app_env) -> None:
    """Typed before the first screen (while the terminal is asked which image
    protocol it speaks, or before anything has the focus): in the input, in
    order, with no answer of the terminal among them."""
    tmux.start(
        [tangents_program(), "--model", "openai/x", "--api-base", f"{fake_provider.base_url}/v1"],
        app_env,
    )
    tmux.type("hello")
    tmux.type(" world")
    tmux.wait_for("f1 help")  # the app's screen: the shell's echo of the keys is gone
    screen = tmux.wait_for("hello world")
    assert "[?" not in screen
    tmux.keys("Enter")
    tmux.wait_for("echo: hello world")
    assert sent_texts(fake_provider) == ["hello world"]
