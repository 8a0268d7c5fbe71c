"""Nothing leaves the context silently (issue 33 item 1), with the real
program in print mode against a server with a 4,096-token window.

A few exchanges, then a 1,500-word answer, then a question about it: the
request after the big exchange carries it (shortened in the middle, with a
marker) or a summary made from it; stderr says what was shortened; and
``sessions export --format openai`` is exactly the request that was sent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from fake_local_server import LocalServer

from tests.fake_provider import Fail, FakeProvider, Reply
from tests.integration.cli import openai_env, request_texts, run

BIG = " ".join(f"bigword{i}" for i in range(1500))
QUESTION = "what was the 100th word of the big answer?"


def test_a_big_exchange_stays_in_the_context_and_the_export_is_the_request(
    tmp_path: Path,
) -> None:
    db = tmp_path / "t.db"
    config = tmp_path / "config.toml"
    # Summaries by another name, so the answers can be scripted apart from them.
    config.write_text(
        'retries = 0\n[compaction]\ncompaction_model = "openai/summarizer"\n'
        '[context_windows]\n"openai/summarizer" = 4096\n'
    )
    with FakeProvider(local=LocalServer("vllm", 4_096)) as server:
        base = ["--db", str(db), "--config", str(config), "--model", "openai/smollm2"]
        base += ["--api-base", server.base_url + "/v1"]
        for n, prompt in enumerate(["hello there", "tell me about cats", "and about dogs"]):
            done = run(*base, *(["-c"] if n else []), "-p", prompt, env=openai_env())
            assert done.returncode == 0, done.stderr
        server.script_for("smollm2", Reply(text=BIG, chunk_size=4_000))
        done = run(*base, "-c", "-p", "BIG-ONE tell me 1500 words", env=openai_env())
        assert done.returncode == 0, done.stderr
        # The answer to the question fails, so the path stays as it was sent.
        server.script_for("smollm2", Fail(status=500))
        asked = run(*base, "-c", "-p", QUESTION, env=openai_env())
        assert asked.returncode == 1, asked.stderr

        answers = [r.body for r in server.requests if r.body.get("model") == "smollm2"]
        summaries = [r.body for r in server.requests if r.body.get("model") == "summarizer"]
        sent = answers[-1]
        sent_text = "\n".join(request_texts(sent))
        assert sent_text.endswith(QUESTION)
        summarized = set(
            re.findall(r"bigword\d+", "\n".join(t for b in summaries for t in request_texts(b)))
        )
        if "bigword0 " in sent_text:
            # Its start and its end, and how much of the middle was left out.
            assert "bigword1499" in sent_text
            assert re.search(r"\[… [\d,]+ words of this reply left out to fit", sent_text)
            assert re.search(r"shortened to fit the context window.*bigword0", asked.stderr)
        else:
            assert summarized == set(BIG.split()), "neither sent nor summarized"
        assert server.local.refused == 0

        sid = json.loads(run("--db", str(db), "sessions", "list", "--json").stdout)[0]["id"]
        exported = run(*base, "sessions", "export", sid, "--format", "openai", env=openai_env())
        assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout) == sent["messages"]
