"""Context window and context tokens: usage reported by the provider plus a
count of what is new since."""

from __future__ import annotations

import subprocess
import sys

from core.compaction.plan import budget_for
from core.providers import sdk
from core.sessions.entries import Compaction
from core.sessions.messages import Usage
from core.settings import CompactionSettings
from core.tokens import (
    DEFAULT_CONTEXT_WINDOW,
    DEMO_CONTEXT_WINDOW,
    HOSTED_CONTEXT_WINDOW,
    context_tokens,
    context_window,
    count_tokens,
    estimated_usage,
    image_tokens,
    split_usage,
    upper_bound_tokens,
    usage_unreported,
)
from tests.compaction.builders import assistant, chain, extend, image, user

MODEL = "anthropic/claude-sonnet-4-5"


def test_context_window_from_litellms_table_with_defaults() -> None:
    assert context_window("anthropic/claude-sonnet-4-5") == 200_000
    assert context_window("openai/gpt-4o") == 128_000
    assert context_window("demo") == DEMO_CONTEXT_WINDOW == 32_768
    assert context_window("my-endpoint/some-local-model") == DEFAULT_CONTEXT_WINDOW == 8_192
    assert context_window("openai/smollm2") == DEFAULT_CONTEXT_WINDOW  # maybe a local server
    # A hosted provider's model the table does not know yet: a new release, large.
    assert context_window("anthropic/claude-next") == HOSTED_CONTEXT_WINDOW == 128_000
    assert (
        context_window("my-endpoint/some-local-model", {"my-endpoint/some-local-model": 8192})
        == 8192
    )


def test_no_sdk_is_imported_to_know_the_window_or_to_decide() -> None:
    code = (
        "import sys\n"
        "from core.tokens import context_window, upper_bound_tokens, context_tokens\n"
        "import core.compaction.run, core.chat.turn\n"
        "from core.sessions.entries import Entry\n"
        "from core.sessions.messages import Message, Usage\n"
        "from core.sessions.content import TextContent\n"
        "assert context_window('anthropic/claude-sonnet-4-5') == 200000\n"
        "u = Entry.new('s', None, Message(role='user', content=(TextContent('hi'),)))\n"
        "a = Entry.new('s', u.id, Message(role='assistant', content=(TextContent('yo'),), stop_reason='stop',"
        " usage=Usage(input_tokens=10, output_tokens=2)))\n"
        "assert context_tokens([u, a], 'anthropic/claude-sonnet-4-5') == 12\n"
        "assert upper_bound_tokens([u], 'x') > 0\n"
        "assert 'litellm' not in sys.modules and 'anthropic' not in sys.modules, 'an SDK was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_reported_usage_plus_what_is_new_since() -> None:
    usage = Usage(input_tokens=1_000, output_tokens=200, cache_read_tokens=5_000)
    path = chain(user("q1"), assistant("a1", usage=usage), user("a follow-up " * 50))
    split = split_usage(path, MODEL)
    assert split.reported == 6_200
    assert [m.text for m in split.new] == ["a follow-up " * 50]
    exact = context_tokens(path, MODEL)
    assert 6_200 + 40 < exact < 6_200 + 200
    assert context_tokens(path, MODEL, exact=False) > 6_200
    # Nothing new since the reply: nothing to count.
    assert context_tokens(path[:2], MODEL) == 6_200


def test_aborted_replies_and_replies_before_a_compaction_do_not_count() -> None:
    big = Usage(input_tokens=150_000, output_tokens=1_000)
    half = assistant("half", usage=Usage(input_tokens=9), stop="aborted")
    path = chain(user("q1"), assistant("a1", usage=big), user("q2"), half)
    assert split_usage(path, MODEL).reported == 151_000
    path = extend(path, Compaction(summary="short summary", first_kept_id=path[2].id))
    split = split_usage(path, MODEL)
    assert split.reported == 0, "the compaction replaced the context that usage measured"
    assert [m.text.startswith("The conversation before") for m in split.new][:1] == [True]
    assert context_tokens(path, MODEL) < 100


def test_images_are_counted_by_size() -> None:
    assert image_tokens(image(1, 100, 100)) == 85
    assert image_tokens(image(1, 1000, 750)) == 1000
    assert image_tokens(image(1, 8000, 8000)) == image_tokens(image(1, 1568, 1568)) < 3_300
    assert image_tokens(image(1, 0, 0)) == 1_000
    with_image = chain(user("see", image(1, 1000, 750)))
    assert 1000 < context_tokens(with_image, MODEL) < 1020
    assert 1000 < context_tokens(with_image, MODEL, exact=False) < 1020


def test_falls_back_to_the_estimate_when_litellm_cannot_count(monkeypatch) -> None:
    def broken():
        raise ImportError("no litellm here")

    monkeypatch.setattr(sdk, "litellm", broken)
    messages = [user("x" * 4000)]
    assert count_tokens(messages, MODEL) == count_tokens(messages, MODEL, exact=False) == 1004


def test_upper_bound_is_never_below_the_count() -> None:
    path = chain(user("日本語のテキスト " * 200), assistant("ok " * 300), user("more 😀 " * 100))
    assert upper_bound_tokens(path, MODEL) >= context_tokens(path, MODEL)
    budget = budget_for(context_window(MODEL), CompactionSettings())
    assert upper_bound_tokens(path, MODEL) < budget.threshold


def test_a_path_whose_server_counts_nothing_is_estimated_whole() -> None:
    """Issue 32: no usage from llama-cpp-python; the context is counted here, marked so."""
    words = "the garden by the sea " * 40
    path = chain(user(words), assistant(words), user("and then?"))
    assert usage_unreported(path) and context_tokens(path, "openai/smollm2", exact=False) > 400
    assert not usage_unreported(chain(user("hi")))  # no reply yet: nothing to say
    counted = extend(path, assistant("ok", usage=Usage(input_tokens=500, output_tokens=2)))
    assert not usage_unreported(counted)
    compacted = extend(counted, Compaction(summary="s", first_kept_id=counted[-1].id))
    assert not usage_unreported(extend(compacted, user("q")))  # nothing replied since
    assert usage_unreported(extend(compacted, user("q"), assistant("a")))


def test_an_estimate_made_here_is_no_report() -> None:
    """Issue 32: a reply carrying the usage estimated for a server that counts
    nothing leaves the context figure an estimate counted from the messages."""
    words = "the garden by the sea " * 40
    path = chain(user(words), assistant(words), user("and then?"))
    guessed = Usage(input_tokens=9_000, output_tokens=9_000, estimated=True)
    estimated = chain(user(words), assistant(words, usage=guessed), user("and then?"))
    assert usage_unreported(estimated)
    assert context_tokens(estimated, MODEL, exact=False) == context_tokens(path, MODEL, exact=False)
    reply = estimated[1].message
    usage = estimated_usage([estimated[0].message], 100, reply)
    assert usage.estimated and usage.input_tokens == len(words) // 4 + 4 + 100
    assert usage.output_tokens == len(words) // 4 + 4
