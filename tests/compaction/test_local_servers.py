"""Local servers with small windows, as a user meets them (issue #14).

The fake provider imitates each server (tests/fake_local_server.py): where it
says its window, and how it refuses a prompt over it. Everything goes through
real httpx, a real SQLite file and the conversation every front end
uses. Settings are the defaults: nothing tells Tangents the window.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fake_local_server import KINDS, LocalServer

from core.chat.conversation import Conversation
from core.chat.events import CompactionStarted, Event, Notice, WindowLearned
from core.providers.endpoint_window import ask_window, from_ollama
from core.sessions.entries import Compaction
from core.sessions.messages import user_text
from core.sessions.session import Session
from core.settings import Agent, Endpoint, Settings
from core.tokens import known_context_window
from storage import SqliteStore
from tests.compaction.builders import assistant
from tests.fake_provider import FakeProvider

MODEL = "openai/smollm2"
WORDS = "the garden by the sea has cats and a long wall of old stones "


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    store = await SqliteStore.open(tmp_path / "t.db")
    yield store
    await store.close()


def window_of(conversation: Conversation) -> int | None:
    return known_context_window(MODEL, conversation.settings.context_windows)


async def conversation_at(store: SqliteStore, server: FakeProvider, **settings) -> Conversation:
    session = await Session.create(store, cwd="/")
    return Conversation(
        session,
        Settings(retries=2, **settings),
        default_model=MODEL,
        default_thinking="off",
        api_base=server.base_url + "/v1",
    )


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "llama-cpp-python"])
async def test_the_window_is_asked_where_each_server_says_it(kind: str) -> None:
    local = LocalServer(kind, 4_096)
    with FakeProvider(local=local) as server:
        assert await ask_window(server.base_url, "smollm2") == (4_096, kind)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "llama-cpp-python"])
async def test_a_window_too_large_to_be_real_is_no_answer(kind: str) -> None:
    """10^30 tokens (every budget made from it overflowed a float) is not believed."""
    with FakeProvider(local=LocalServer(kind, 10**30)) as server:
        assert await ask_window(server.base_url, "smollm2") is None


async def test_llama_cpp_python_says_it_nowhere() -> None:
    with FakeProvider(local=LocalServer("llama-cpp-python", 4_096)) as server:
        assert await ask_window(server.base_url, "smollm2") is None


async def test_nothing_listening_is_no_answer_quickly() -> None:
    with FakeProvider() as server:
        root = server.base_url
    assert await ask_window(root, "smollm2", timeout=2) is None


def test_ollama_prefers_the_context_of_the_loaded_model() -> None:
    show = {"model_info": {"qwen3.context_length": 40_960}}
    running = {"models": [{"name": "qwen3:4b", "context_length": 16_384}]}
    assert from_ollama(show, running, "qwen3:4b") == 16_384
    assert from_ollama(show, {"models": []}, "qwen3:4b") == 4_096  # Ollama's default num_ctx
    assert from_ollama({"parameters": "num_ctx 8192"}, None, "qwen3:4b") == 8_192


async def test_learned_once_remembered_in_the_database_and_shown(store: SqliteStore) -> None:
    local = LocalServer("vllm", 4_096)
    with FakeProvider(local=local) as server:
        first = await conversation_at(store, server)
        events: list[Event] = []
        first.subscribe(events.append)
        assert window_of(first) is None  # before: unknown, so a guess
        await first.send("hello")
        assert [e for e in events if isinstance(e, WindowLearned)] == [
            WindowLearned(MODEL, 4_096, "vllm")
        ]
        assert window_of(first) == 4_096
        asked = len(local.asked)
        second = await conversation_at(store, server)
        await second.send("again")
        assert window_of(second) == 4_096
        assert len(local.asked) == asked, "asked again instead of reading the database"
    saved = await store.learned_window(server.base_url, MODEL)
    assert saved is not None and saved.tokens == 4_096 and saved.learned_at


@pytest.mark.parametrize("window", [3_000, 4_096, 8_192, 32_768])
async def test_default_settings_compact_on_a_learned_small_window(
    store: SqliteStore, window: int
) -> None:
    """A compaction entry, no dropped-turn note, every request under the window."""
    local = LocalServer("llama.cpp", window)
    words = WORDS * (window // (3 * len(WORDS)))  # an exchange is about a tenth of the window
    with FakeProvider(local=local) as server:
        conversation = await conversation_at(store, server)
        notices: list[str] = []
        conversation.subscribe(lambda e: notices.append(e.text) if isinstance(e, Notice) else None)
        for i in range(24):
            result = await conversation.send(f"question {i}: {words}")
            assert result.turns[-1].error is None, result.turns[-1].error
    path = conversation.session.path
    assert [e for e in path if isinstance(e.payload, Compaction)], "never compacted"
    assert not [n for n in notices if "left out" in n], notices
    assert local.refused == 0 and local.largest_prompt <= window


@pytest.mark.parametrize("kind", KINDS)
async def test_overflow_in_each_servers_way_compacts_once_and_retries(
    store: SqliteStore, kind: str
) -> None:
    """The window is set larger than the server's (as a wrong guess would be):
    the server refuses, in its own way, and the turn compacts once and retries."""
    local = LocalServer(kind, 1_500)
    with FakeProvider(local=local) as server:
        conversation = await conversation_at(store, server, context_windows={MODEL: 3_000})
        for i in range(4):  # under 3,000 - 750 by Tangents' estimate, over 1,500 by the server's
            text = f"old question {i} " + WORDS * 13
            await conversation.session.append_many([user_text(text), assistant("ok " + text)])
        events: list[Event] = []
        conversation.subscribe(events.append)
        result = await conversation.send("and now?")
    turn = result.turns[-1]
    assert turn.error is None, turn.error
    assert [e.trigger for e in events if isinstance(e, CompactionStarted)] == ["overflow"]
    assert local.refused == 1, "refused once, then the compacted context fit"


async def test_a_server_that_says_nothing_is_learned_from_its_refusal(store: SqliteStore) -> None:
    """llama-cpp-python says its window nowhere: 8,192 is guessed; its first
    refusal (a stream that just ends) sends one question it is sure to refuse,
    not streamed and for one token, whose answer names the window; later turns
    compact before it refuses again."""
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider(local=local) as server:
        conversation = await conversation_at(store, server)
        events: list[Event] = []
        conversation.subscribe(events.append)
        for i in range(40):
            result = await conversation.send(f"question {i}: " + WORDS * 8)
            assert result.turns[-1].error is None, result.turns[-1].error
    learned = [e for e in events if isinstance(e, WindowLearned)]
    assert [(e.source, e.tokens) for e in learned] == [("refusal", 4_096)]
    triggers = [e.trigger for e in events if isinstance(e, CompactionStarted)]
    assert triggers[0] == "overflow" and set(triggers[1:]) == {"auto"}, triggers
    assert local.refused == 2, "the stream that ended, then the question"
    probe = [r.body for r in server.requests if not r.body.get("stream")]
    assert [p.get("max_tokens") for p in probe] == [1]
    saved = await store.learned_window(server.base_url, MODEL)
    assert saved is not None and (saved.source, saved.tokens) == ("refusal", 4_096)


async def test_a_first_question_larger_than_the_window_teaches_the_window(
    store: SqliteStore,
) -> None:
    """The first message of a session, alone larger than the server's window:
    nothing can be compacted, yet the refusal still says the window (the
    footer stops guessing 8,192), and the error says the message itself is
    too long."""
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider(local=local) as server:
        conversation = await conversation_at(store, server)
        events: list[Event] = []
        conversation.subscribe(events.append)
        result = await conversation.send("summarise this: " + WORDS * 400)
    error = result.turns[-1].error
    assert error is not None and error.kind == "context_overflow"
    assert (
        "the newest message (~" in error.detail
        and "too long for this model by itself" in error.detail
    )
    learned = [e for e in events if isinstance(e, WindowLearned)]
    assert [(e.source, e.tokens) for e in learned] == [("refusal", 4_096)]
    assert window_of(conversation) == 4_096


async def test_an_endless_answer_is_no_answer_and_is_read_only_in_part() -> None:
    """From issue 37: an endless window-probe answer reached 1.5 GB in the probe's 3 s."""
    with FakeProvider() as server:
        server.endless_info = True
        assert await ask_window(server.base_url, "smollm2", timeout=10) is None
        # five questions, each read to the probe limit (4 MiB) and no further
        assert server.endless_bytes < 64 * 1024 * 1024


@pytest.mark.parametrize(
    ("window", "num_ctx_set", "expected"),
    [(2_048, True, 2_048), (2_048, False, 2_048), (32_768, False, 4_096)],
)
async def test_ollamas_show_gives_num_ctx_else_its_default_under_the_models_length(
    window: int, num_ctx_set: bool, expected: int
) -> None:
    """``/api/show``: the ``num_ctx`` its parameters set; without one, the
    model's ``context_length`` in ``model_info``, capped by Ollama's default."""
    local = LocalServer("ollama", window, num_ctx_set=num_ctx_set)
    with FakeProvider(local=local) as server:
        assert await ask_window(server.base_url, "smollm2") == (expected, "ollama")
    assert "/api/show" in local.asked


async def test_ollama_which_drops_the_start_silently_is_never_sent_too_much(
    store: SqliteStore,
) -> None:
    """Ollama cuts a prompt over ``num_ctx`` without an error (the user never
    learns the start of the conversation was lost): the window is read from
    ``/api/show`` first and the conversation compacts below it."""
    local = LocalServer("ollama", 2_048, num_ctx_set=False, truncates=True)
    with FakeProvider(local=local) as server:
        conversation = await conversation_at(store, server)
        for i in range(12):
            result = await conversation.send(f"question {i}: " + WORDS * 4)
            assert result.turns[-1].error is None, result.turns[-1].error
    path = conversation.session.path
    assert [e for e in path if isinstance(e.payload, Compaction)], "never compacted"
    assert window_of(conversation) == 2_048
    assert local.truncated == 0 and local.largest_prompt <= 2_048


async def test_an_agents_refusal_teaches_the_window_of_the_agents_server(
    store: SqliteStore,
) -> None:
    """Issue 31: the window question after an overflow went to the
    conversation's server (the config's ``api_base``), about the conversation's model,
    when the reply that overflowed was a round-table agent's, served at an
    ``[[endpoints]]`` entry of its own."""
    local = LocalServer("llama-cpp-python", 4_096)
    with FakeProvider() as main, FakeProvider(local=local) as lab:
        session = await Session.create(store, cwd="/")
        settings = Settings(
            retries=2,
            api_base=main.base_url + "/v1",
            endpoints=(Endpoint("lab", lab.base_url + "/v1", models=("smollm2",)),),
            agents=(Agent("Small", "lab/smollm2"),),
        )
        conversation = Conversation(
            session,
            settings,
            default_model="openai/main",
            default_thinking="off",
            api_base=None,
        )
        events: list[Event] = []
        conversation.subscribe(events.append)
        for i in range(40):
            result = await conversation.send(f"@Small question {i}: " + WORDS * 8)
            assert result.turns[-1].error is None, result.turns[-1].error
            if local.refused:
                break
    assert local.refused == 2, "the stream that ended, then the question"
    assert not [r for r in main.requests if not r.body.get("stream")], "no question to main"
    learned = [e for e in events if isinstance(e, WindowLearned)]
    assert [(e.model, e.source, e.tokens) for e in learned] == [("lab/smollm2", "refusal", 4_096)]
    assert await store.learned_window(main.base_url, "openai/main") is None
    saved = await store.learned_window(lab.base_url, "lab/smollm2")
    assert saved is not None and (saved.source, saved.tokens) == ("refusal", 4_096)
