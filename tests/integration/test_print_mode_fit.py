"""Never left out whole (issue 33 item 1) in print mode: the real program
against a vLLM-like server with a 5,000-token window, four pictures and
``image_budget = 6``, then a QUESTION. Print mode goes through the same turn
as the app: it compacts first (the summarizer sees every picture's message),
or, with compaction off, sends the older messages as marked stubs and says
so on stderr. ``sessions export --format openai`` stays the request sent.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from fake_local_server import LocalServer
from PIL import Image

from tests.fake_provider import Fail, FakeProvider
from tests.integration.cli import openai_env, request_texts, run, sessions

QUESTION = "which picture was the darkest?"


def picture(path: Path, shade: int) -> Path:
    out = io.BytesIO()
    Image.new("RGB", (8, 6 + shade), (shade * 40, 10, 200)).save(out, "PNG")
    path.write_bytes(out.getvalue())
    return path


@pytest.mark.parametrize("compaction", ["", "enabled = false\n"], ids=["compacts", "off"])
def test_print_mode_compacts_or_sends_marked_stubs_and_exports_the_request(
    tmp_path: Path, compaction: str
) -> None:
    db = tmp_path / "t.db"
    config = tmp_path / "config.toml"
    config.write_text(
        "retries = 0\nimage_budget = 6\n"
        f'[compaction]\n{compaction}compaction_model = "openai/summarizer"\n'
        '[context_windows]\n"openai/summarizer" = 5000\n"openai/smollm2" = 5000\n'
    )
    with FakeProvider(local=LocalServer("vllm", 5_000)) as server:
        base = ["--db", str(db), "--config", str(config), "--model", "openai/smollm2"]
        base += ["--api-base", server.base_url + "/v1"]
        said: list[str] = []
        for i in range(4):
            shot = picture(tmp_path / f"p{i}.png", i)
            more = ["-c"] if i else []
            done = run(*base, *more, "-a", str(shot), "-p", f"picture {i} start", env=openai_env())
            assert done.returncode == 0, done.stderr
            said.append(done.stderr)
        # The answer fails, so the path stays as it was sent (for the export).
        server.script_for("smollm2", Fail(status=503))
        asked = run(*base, "-c", "-p", QUESTION, env=openai_env())
        assert asked.returncode == 1, asked.stderr

        answers = [r.body for r in server.requests if r.body.get("model") == "smollm2"]
        summaries = [r.body for r in server.requests if r.body.get("model") == "summarizer"]
        sent = answers[-1]
        sent_text = "\n".join(request_texts(sent))
        assert sent_text.endswith(QUESTION)
        if compaction:
            assert not summaries
            for i in range(4):
                assert f"picture {i} start" in sent_text
            assert re.search(r"\[image left out to fit the context window: image/png", sent_text)
            assert "sent as stubs to fit the context window" in asked.stderr
        else:
            said.append(asked.stderr)
            assert "compacting the conversation (older messages would not fit" in "".join(said)
            summarized = "\n".join(t for b in summaries for t in request_texts(b))
            # Each picture's message went whole: summarized, or kept in the request.
            assert "picture 0 start" in summarized
            for i in range(4):
                assert f"picture {i} start" in summarized + sent_text
            assert "left out to fit" not in sent_text
        assert server.local.refused == 0

        sid = sessions(db)[0]["id"]
        exported = run(*base, "sessions", "export", sid, "--format", "openai", env=openai_env())
        assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout) == sent["messages"]
